import { parseArgs } from 'node:util';
import { startStripeStandIn } from '../test/support/stripe.js';
import { BENCH_SERVER_ENV, benchDatabase, databaseKind, median, type RunningServer, startServer } from './lib.js';
import {
  checkAcknowledged,
  checkUrl,
  emptyTally,
  nothingAcknowledged,
  prepareMixedLoad,
  runMixedLoad,
  servedInBatches,
} from './mixed-load.js';

/**
 * SIGKILL under mixed write load, then restart and check, `--kills` times, on one database:
 *   npm run bench:kill -- --db embedded|external [--kills 20] [--writers 8] [--fans 12] [--buyers 2]
 * Admin writers create collectibles and packs and add collectibles to pools; fans buy packs of
 * one hot pack (start, complete: served in batches, half of them with Idempotency-Keys; the run
 * reports how many shared a batch) and open them; buyers pay for coins through Stripe Checkout (a local stand-in)
 * and deliver the signed webhooks; all as fast as the server answers. The server is killed with
 * SIGKILL at a random moment, restarted on the same data, and checked: every write the clients
 * saw acknowledged is there (with its audit row, its owned pack, its stored open, its one top-up),
 * and every invariant of `npm run check-invariants` holds, so nothing unacknowledged is half
 * applied. Last, one SIGTERM under the same load must exit 0.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    kills: { type: 'string', default: '20' },
    writers: { type: 'string', default: '8' },
    fans: { type: 'string', default: '12' },
    buyers: { type: 'string', default: '2' },
  },
});
const kind = databaseKind(values.db);
const kills = Number(values.kills);
const writers = Number(values.writers);
const fanCount = Number(values.fans);
const buyerCount = Number(values.buyers);
const PORT = 3531;

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
  const acked = nothingAcknowledged();
  const tally = emptyTally();
  const restarts: number[] = [];
  let server: RunningServer = await startServer(env, PORT);
  const setup = await prepareMixedLoad(server.url, {
    prefix: 'kill',
    fans: fanCount,
    buyers: buyerCount,
    cardsPerPack: 3,
    copiesPerCard: 20_000,
  });
  const mixedLoad = (round: number) =>
    runMixedLoad({
      url: server.url,
      setup,
      stripe,
      writers,
      label: `kill-${round}`,
      acked,
      tally,
      keepGoing: () => true,
    });
  const allProblems: string[] = [];
  for (let round = 1; round <= kills; round++) {
    const load = mixedLoad(round);
    await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 1200));
    server.child.kill('SIGKILL');
    await load;
    const started = performance.now();
    server = await startServer(env, PORT);
    restarts.push(performance.now() - started);
    const problems = await checkAcknowledged(await checkUrl(env), acked);
    allProblems.push(...problems.map((problem) => `after kill ${round}: ${problem}`));
    process.stderr.write(
      `kill ${round}/${kills}: acknowledged so far ${acked.collectibles.size} collectibles, ${acked.purchases.size} purchases, ${acked.opens.size} opens, ${acked.orders.size} payments; ${problems.length} problems\n`,
    );
  }
  // SIGTERM under the same load: graceful, exit 0.
  const load = mixedLoad(kills + 1);
  await new Promise((resolve) => setTimeout(resolve, 800));
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  const signalled = performance.now();
  server.child.kill('SIGTERM');
  const code = await exited;
  const termMs = performance.now() - signalled;
  await load;
  server = await startServer(env, PORT);
  allProblems.push(
    ...(await checkAcknowledged(await checkUrl(env), acked)).map((problem) => `after SIGTERM: ${problem}`),
  );
  await server.stop();

  console.log(
    `SIGKILL under mixed write load on ${kind}: ${writers} admin writers, ${fanCount} fans buying and opening, ${buyerCount} buyers paying through Checkout; Node ${process.version}\n`,
  );
  const starts = servedInBatches(tally.batchTimes.starts);
  const completes = servedInBatches(tally.batchTimes.completes);
  console.log(
    `Served in batches of two or more: ${starts.batched} of ${starts.all} starts and ${completes.batched} of ${completes.all} completes acknowledged (half the fans send Idempotency-Keys).\n`,
  );
  console.log(
    '| kills | requests answered | acknowledged: admin creations / purchases / opens / payments | lost acknowledged writes | invariant violations | restart to ready (median / max) | SIGTERM under load |',
  );
  console.log('|---|---|---|---|---|---|---|');
  const lost = allProblems.filter((problem) => problem.includes('lost')).length;
  const admin = acked.collectibles.size + acked.packs.size + acked.poolEntries.size;
  console.log(
    `| ${kills} | ${tally.answered} | ${admin} / ${acked.purchases.size} / ${acked.opens.size} / ${acked.orders.size} | ${lost} | ${allProblems.length - lost} | ${Math.round(median(restarts))} / ${Math.round(Math.max(...restarts))} ms | exit ${code} after ${Math.round(termMs)} ms |`,
  );
  for (const problem of allProblems.slice(0, 20)) console.log(`- ${problem}`);
  if (allProblems.length > 0 || code !== 0) process.exitCode = 1;
} finally {
  await database.cleanup();
  await stripe.close();
}
