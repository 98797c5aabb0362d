import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startStripeStandIn } from '../test/support/stripe.js';
import { BENCH_SERVER_ENV, benchDatabase, databaseKind, startServer } from './lib.js';
import {
  checkAcknowledged,
  checkUrl,
  emptyTally,
  nothingAcknowledged,
  prepareMixedLoad,
  runMixedLoad,
} from './mixed-load.js';

/**
 * A soak: the crash test's mixed load (admin writers, fans buying and opening, buyers paying
 * through Checkout) against the built server for `--minutes`, on one database:
 *   npm run bench:soak -- --db embedded|external [--minutes 10] [--warmup 2] [--writers 4] [--fans 4] [--buyers 2]
 * The server's RSS is sampled every 5 s. Bars: RSS at the end within 15% of RSS after the
 * warm-up, zero unexpected answers (any status but the one a client expects, or no answer), and
 * afterwards every acknowledged write present and every invariant of `npm run check-invariants`
 * holding. Exits 1 when a bar is missed.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    minutes: { type: 'string', default: '10' },
    // The first minute's sample can catch a peak before the first full collection.
    warmup: { type: 'string', default: '2' },
    writers: { type: 'string', default: '4' },
    fans: { type: 'string', default: '4' },
    buyers: { type: 'string', default: '2' },
  },
});
const kind = databaseKind(values.db);
const runMs = Number(values.minutes) * 60_000;
const warmupMs = Number(values.warmup) * 60_000;
const SAMPLE_EVERY_MS = 5000;
const RSS_BAR = 0.15;
const PORT = 3551;

if (!(runMs > warmupMs && warmupMs >= 0)) throw new Error('--minutes must be longer than --warmup');

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
  if (!line) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line[1]) / 1024;
}

const stripe = await startStripeStandIn();
const database = await benchDatabase(kind);
try {
  const env = {
    ...database.env,
    ...BENCH_SERVER_ENV,
    ...stripe.env,
    LOG_LEVEL: 'error',
    PURCHASE_RATE_LIMIT: '1000000',
    CRON_INTERNAL: 'false',
  };
  const server = await startServer(env, PORT);
  const pid = server.child.pid as number;
  // One card per pack and 100,000 copies: the hot pack does not sell out within the run.
  const setup = await prepareMixedLoad(server.url, {
    prefix: 'soak',
    fans: Number(values.fans),
    buyers: Number(values.buyers),
    cardsPerPack: 1,
    copiesPerCard: 20_000,
  });
  const acked = nothingAcknowledged();
  const tally = emptyTally();
  const started = performance.now();
  const samples: { atMs: number; rss: number; answered: number }[] = [];
  const sampler = setInterval(
    () => samples.push({ atMs: performance.now() - started, rss: rssMiB(pid), answered: tally.answered }),
    SAMPLE_EVERY_MS,
  );
  await runMixedLoad({
    url: server.url,
    setup,
    stripe,
    writers: Number(values.writers),
    label: 'soak',
    acked,
    tally,
    keepGoing: () => performance.now() - started < runMs,
  });
  clearInterval(sampler);
  const endRss = rssMiB(pid);
  const elapsedMs = performance.now() - started;
  const afterWarmup = samples.find((sample) => sample.atMs >= warmupMs) ?? samples[0];
  if (!afterWarmup) throw new Error('no RSS sample: the run was shorter than one sampling interval');
  const problems = await checkAcknowledged(await checkUrl(env), acked);
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  server.child.kill('SIGTERM');
  const exitCode = await exited;

  const change = endRss / afterWarmup.rss - 1;
  const unexpected = [...tally.unexpected.values()].reduce((sum, n) => sum + n, 0);
  const maxRss = Math.max(...samples.map((sample) => sample.rss), endRss);
  console.log(
    `Soak on ${kind}: ${values.writers} admin writers, ${values.fans} fans buying and opening, ${values.buyers} buyers paying through Checkout, for ${values.minutes} min (warm-up ${values.warmup} min); Node ${process.version}\n`,
  );
  console.log(
    '| database | minutes | requests answered | per second | unexpected answers | RSS after warm-up | RSS at the end | change | max RSS | acknowledged: admin creations / purchases / opens / payments | problems after the run | SIGTERM |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  const admin = acked.collectibles.size + acked.packs.size + acked.poolEntries.size;
  console.log(
    `| ${kind} | ${(elapsedMs / 60_000).toFixed(1)} | ${tally.answered} | ${Math.round(tally.answered / (elapsedMs / 1000))} | ${unexpected} | ${afterWarmup.rss.toFixed(0)} MiB | ${endRss.toFixed(0)} MiB | ${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}% | ${maxRss.toFixed(0)} MiB | ${admin} / ${acked.purchases.size} / ${acked.opens.size} / ${acked.orders.size} | ${problems.length} | exit ${exitCode} |`,
  );
  console.log('\nRSS and requests answered, per minute:');
  for (const sample of samples.filter((_, i) => (i + 1) % (60_000 / SAMPLE_EVERY_MS) === 0)) {
    console.log(
      `- ${(sample.atMs / 60_000).toFixed(0)} min: ${sample.rss.toFixed(0)} MiB, ${sample.answered} answered`,
    );
  }
  for (const [what, n] of tally.unexpected) console.log(`- unexpected: ${what} x${n}`);
  for (const problem of problems.slice(0, 20)) console.log(`- ${problem}`);
  if (Math.abs(change) > RSS_BAR || unexpected > 0 || problems.length > 0 || exitCode !== 0) process.exitCode = 1;
} finally {
  await database.cleanup();
  await stripe.close();
}
