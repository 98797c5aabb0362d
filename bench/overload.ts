import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { Database } from '../plugins/app/database/index.js';
import { findEconomyViolations } from '../plugins/app/invariants/checker.js';
import { startStripeStandIn } from '../test/support/stripe.js';
import {
  BENCH_SERVER_ENV,
  benchDatabase,
  databaseKind,
  defaultLoadTool,
  load,
  type LoadResult,
  median,
  percentile,
  startServer,
} from './lib.js';
import { checkUrl, emptyTally, nothingAcknowledged, prepareMixedLoad, runMixedLoad, type Tally } from './mixed-load.js';

/**
 * Overload: 400 connections against the built server, on one database:
 *   npm run bench:overload -- --db embedded|external [--connections 400] [--fans 40] [--seconds 20] [--runs 1,2,3] [--env KEY=VALUE ...]
 * (`--env` sets the server's configuration, for instance `--env DATABASE_QUEUE_LIMIT=0` to compare
 * without the queue limit; `--runs` picks which of the three runs below to make.)
 * Three runs of `--seconds` each:
 *   1. money alone: `--fans` fans buying a pack (start, complete) and opening it, as fast as the
 *      server answers (the money paths' latency with the machine to themselves);
 *   2. money under a catalog flood: the same fans, and `--connections` minus `--fans` connections
 *      reading the public catalog (GET /api/packs) through wrk (or autocannon);
 *   3. a money flood: `--connections` fans buying and opening at once.
 * For each: requests answered, median and p99 latency (of every answer, 503s included), how many
 * were shed (503 `overloaded`; the fans then wait the Retry-After they are given), and the rate
 * and p99 of those served (also by step). Also the load generator's own event-loop delay (p99):
 * the fans run in this process, on the server's cores, and a latency they measure includes it.
 * Prints a markdown table, then checks every invariant of the economy on the database.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    connections: { type: 'string', default: '400' },
    fans: { type: 'string', default: '40' },
    seconds: { type: 'string', default: '20' },
    runs: { type: 'string', default: '1,2,3' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const kind = databaseKind(values.db);
const connections = Number(values.connections);
const fanCount = Number(values.fans);
const seconds = Number(values.seconds);
const runs = new Set(values.runs.split(',').map((run) => run.trim()));
if (![...runs].every((run) => ['1', '2', '3'].includes(run)))
  throw new Error('--runs: a comma-separated list of 1, 2 and 3');
const PORT = 3561;
const serverSettings = Object.fromEntries(
  values.env.map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--env ${pair}: expected KEY=VALUE`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);

interface Row {
  run: string;
  traffic: string;
  answered: number;
  perSecond: number;
  p50: number;
  p99: number;
  servedPerSecond: number;
  servedP99: number;
  /** How many were shed, by step. */
  shed: string;
  other: string;
  generatorLagP99: number;
  /** `step: p99` of the served answers, for the fans' runs. */
  byStep: string;
}

/** Runs `work` and answers the p99 of this process's event-loop delay meanwhile, in ms. */
async function withLagMeasured<T>(work: () => Promise<T>): Promise<[T, number]> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  try {
    const result = await work();
    return [result, histogram.percentile(99) / 1e6];
  } finally {
    histogram.disable();
  }
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
    ...serverSettings,
  };
  const server = await startServer(env, PORT);
  try {
    const setup = await prepareMixedLoad(server.url, {
      prefix: 'overload',
      fans: connections,
      buyers: 0,
      cardsPerPack: 1,
      copiesPerCard: 100_000,
    });
    const rows: Row[] = [];

    /** The fans `fans` for `seconds`; answers their row. */
    const money = async (run: string, fans: number): Promise<Row> => {
      const tally: Tally = emptyTally();
      const until = performance.now() + seconds * 1000;
      const [, generatorLagP99] = await withLagMeasured(() =>
        runMixedLoad({
          url: server.url,
          setup: { ...setup, fans: setup.fans.slice(0, fans) },
          stripe,
          writers: 0,
          label: run,
          acked: nothingAcknowledged(),
          tally,
          keepGoing: () => performance.now() < until,
        }),
      );
      const shedSteps = [...tally.unexpected].filter(([what]) => what.endsWith(' 503'));
      const shed = shedSteps.reduce((sum, [, n]) => sum + n, 0);
      const other = [...tally.unexpected]
        .filter(([what]) => !what.endsWith(' 503'))
        .map(([what, n]) => `${what} x${n}`);
      const served = [...tally.servedByStep.values()].flat();
      return {
        run,
        traffic: `money: ${fans} fans`,
        answered: tally.answered,
        perSecond: Math.round(tally.answered / seconds),
        p50: median(tally.latenciesMs),
        p99: percentile(tally.latenciesMs, 99),
        servedPerSecond: Math.round(served.length / seconds),
        servedP99: percentile(served, 99),
        shed:
          shed === 0
            ? '0'
            : `${shed} (${shedSteps.map(([what, n]) => `${what.replace(/ 503$/, '')} ${n}`).join(', ')})`,
        other: other.join(', ') || 'none',
        generatorLagP99,
        byStep: [...tally.servedByStep]
          .map(([step, list]) => `${step} ${Math.round(percentile(list, 99))} ms`)
          .join(', '),
      };
    };
    const catalogRow = (run: string, result: LoadResult): Row => ({
      run,
      traffic: `catalog: ${connections - fanCount} connections`,
      answered: result.requests,
      perSecond: Math.round(result.requestsPerSecond),
      p50: result.p50,
      p99: result.p99,
      // wrk reports one latency for every answer, 503s included.
      servedPerSecond: Math.round(result.requestsPerSecond * (1 - result.non2xx / Math.max(1, result.requests))),
      servedP99: Number.NaN,
      shed: String(result.non2xx),
      other: result.errors ? `${result.errors} socket errors` : 'none',
      generatorLagP99: Number.NaN,
      byStep: 'n/a',
    });

    if (runs.has('1')) rows.push(await money('1. money alone', fanCount));
    if (runs.has('2')) {
      const [underFlood, catalog] = await Promise.all([
        money('2. money under a catalog flood', fanCount),
        load(`${server.url}/api/packs`, {
          connections: connections - fanCount,
          durationSeconds: seconds,
          tool: defaultLoadTool(),
        }),
      ]);
      rows.push(underFlood, catalogRow('2. money under a catalog flood', catalog));
    }
    if (runs.has('3')) rows.push(await money('3. a money flood', connections));

    // Shed or served, nothing may be left half done: every invariant of the economy, afterwards.
    const checker = new pg.Pool({ connectionString: await checkUrl(env), max: 1 });
    const violations = await findEconomyViolations(drizzle({ client: checker }) as unknown as Database).finally(() =>
      checker.end(),
    );
    const settings =
      Object.entries(serverSettings)
        .map(([key, value]) => `${key}=${value}`)
        .join(', ') || 'defaults';
    console.log(
      `Overload on ${kind}: ${connections} connections, ${seconds} s per run, load from ${defaultLoadTool()} and fetch on the same 2 cores; server settings: ${settings}; Node ${process.version}\n`,
    );
    console.log(
      '| run | traffic | answered | per second | median | p99 | shed (503) | served per second | p99 of those served | p99 served, by step | other failures | generator lag p99 |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    const ms = (value: number) => (Number.isNaN(value) ? 'n/a' : `${Math.round(value)} ms`);
    for (const row of rows) {
      console.log(
        `| ${row.run} | ${row.traffic} | ${row.answered} | ${row.perSecond} | ${ms(row.p50)} | ${ms(row.p99)} | ${row.shed} | ${row.servedPerSecond} | ${ms(row.servedP99)} | ${row.byStep} | ${row.other} | ${ms(row.generatorLagP99)} |`,
      );
    }
    console.log(
      `\ninvariant violations afterwards: ${violations.length}${violations.length > 0 ? `\n${violations.join('\n')}` : ''}`,
    );
    if (violations.length > 0) process.exitCode = 1;
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
  await stripe.close();
}
