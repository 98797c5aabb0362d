import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { loadConfig } from '../config/index.js';
import { createAppleVerifier } from '../plugins/app/app-store/verifier.js';
import { startAppleStandIn } from '../test/support/apple.js';
import { BENCH_SECRET } from './lib/credentials.js';
import { processCpuMicros } from './lib/figures.js';
import { BENCH_SERVER_ENV, benchDatabase, benchToken, databaseKind, fromAutocannon, startServer } from './lib.js';

/**
 * App Store transaction verification under load, against the built server and the App Store
 * stand-in (a CA made at start, loopback only):
 *   npm run bench:apple -- --db embedded|external [--seconds 10 (at most 60)] [--connections 50] [--fans 50] [--profile DIR]
 * Each of `--fans` fans buys one bundle through POST /api/checkout/apple (credited: 201), then
 * autocannon posts those signed transactions again at `--connections` connections for `--seconds`:
 * after two untimed seconds of the same (warm-up), every request is verified in full (the JWS
 * signature on every call; the certificate chain verified by Apple's library the first time, then
 * remembered) and answered 200 with the order already made. Then, for comparison on the same
 * server and load, the lightest signed-in request (GET /api/user): the floor of any request at
 * that concurrency on this machine. Each row gives the server process's CPU time per request.
 * The bar: verification p99 under 10 ms at 50 concurrent requests. Then the verification alone, in
 * this process with the service's verifier: one caller, and `--connections` callers at once, each
 * verifying one transaction after another for `--seconds`, every call timed.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    fans: { type: 'string', default: '50' },
    /** Writes the server's CPU profile there (read it with bench/profile-summary.ts). */
    profile: { type: 'string' },
  },
});
const kind = databaseKind(values.db);
const seconds = Math.min(Math.max(Number(values.seconds) || 10, 1), 60);
const connections = Math.min(Math.max(Number(values.connections) || 50, 1), 500);
const fanCount = Math.min(Math.max(Number(values.fans) || 50, 1), 1000);
const SKU = 'com.example.packs.bench';

const apple = await startAppleStandIn();

/** The service's verifier in this process: `callerCount` callers at once, every verification timed. */
async function verificationAlone(transactions: readonly string[], callerCount: number): Promise<void> {
  const config = loadConfig({ ...apple.env, AUTH_JWT_SECRET: BENCH_SECRET }).apple;
  if (!config) throw new Error('the App Store stand-in did not configure Apple');
  const verifier = createAppleVerifier(config);
  const durations: number[] = [];
  let next = 0;
  const callers = async (until: number, record: boolean) =>
    Promise.all(
      Array.from({ length: callerCount }, async () => {
        while (performance.now() < until) {
          const started = performance.now();
          await verifier.transaction(transactions[next++ % transactions.length] as string);
          if (record) durations.push(performance.now() - started);
        }
      }),
    );
  await callers(performance.now() + 2_000, false);
  const began = performance.now();
  await callers(began + seconds * 1000, true);
  const elapsed = (performance.now() - began) / 1000;
  durations.sort((a, b) => a - b);
  const at = (q: number) =>
    (durations[Math.min(durations.length - 1, Math.floor(q * durations.length))] ?? 0).toFixed(2);
  console.log(
    `| ${callerCount} | ${durations.length} | ${(durations.length / elapsed).toFixed(0)} | ${at(0.5)} | ${at(0.99)} | ${(durations.at(-1) ?? 0).toFixed(2)} |`,
  );
}
const database = await benchDatabase(kind);
try {
  const server = await startServer(
    { ...database.env, ...BENCH_SERVER_ENV, ...apple.env, CRON_INTERNAL: 'false' },
    3530,
    values.profile ? { profileDir: values.profile } : {},
  );
  try {
    const post = async (path: string, token: string, body: unknown) => {
      const res = await fetch(`${server.url}/api${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, text: await res.text() };
    };
    const admin = benchToken({ sub: 'bench-admin', role: 'admin' });
    const made = await post('/admin/products', admin, { name: 'Bench iOS coins', coins: 100, appleProductId: SKU });
    if (made.status !== 201) throw new Error(`product: ${made.status} ${made.text}`);
    const purchases = Array.from({ length: fanCount }, (_, i) => {
      const sub = `bench-ios-${i}`;
      return {
        token: benchToken({ sub }),
        body: JSON.stringify({ signedTransaction: apple.transaction({ userId: sub, productId: SKU }) }),
      };
    });
    for (const purchase of purchases) {
      const first = await post('/checkout/apple', purchase.token, JSON.parse(purchase.body));
      if (first.status !== 201) throw new Error(`first purchase: ${first.status} ${first.text}`);
    }
    let next = 0;
    const pid = server.child.pid as number;
    /** One timed run, with the server process's CPU time per request. */
    const measured = async (load: () => Promise<autocannon.Result>) => {
      const cpuBefore = processCpuMicros(pid);
      const result = fromAutocannon(await load());
      const cpu = processCpuMicros(pid) - cpuBefore;
      return { ...result, cpuPerRequest: result.requests > 0 ? cpu / result.requests : Number.NaN };
    };
    const row = (label: string, result: Awaited<ReturnType<typeof measured>>) =>
      `| ${label} | ${result.requests} | ${result.requestsPerSecond.toFixed(0)} | ${result.cpuPerRequest.toFixed(0)} | ${result.p50} | ${result.p99} | ${result.non2xx} | ${result.errors} |`;
    const run = (duration: number) =>
      autocannon({
        url: `${server.url}/api/checkout/apple`,
        connections,
        duration,
        method: 'POST',
        requests: [
          {
            setupRequest: (request) => {
              const purchase = purchases[next++ % purchases.length] as (typeof purchases)[number];
              return {
                ...request,
                headers: { authorization: `Bearer ${purchase.token}`, 'content-type': 'application/json' },
                body: purchase.body,
              };
            },
          },
        ],
      });
    const floor = (duration: number) =>
      autocannon({
        url: `${server.url}/api/user`,
        connections,
        duration,
        headers: { authorization: `Bearer ${(purchases[0] as (typeof purchases)[number]).token}` },
      });
    // Two seconds untimed first: the JIT and the connection pool warm up, and the chain is remembered.
    await run(2);
    const result = await measured(() => run(seconds));
    await floor(2);
    const lightest = await measured(() => floor(seconds));
    console.log(
      `On ${kind} PostgreSQL, ${connections} connections, ${seconds} s each, ${fanCount} fans (Node ${process.version})\n`,
    );
    console.log('| request | requests | per second | server CPU µs per request | p50 ms | p99 ms | non-2xx | errors |');
    console.log('|---|---|---|---|---|---|---|---|');
    console.log(row('POST /api/checkout/apple (a purchase already credited)', result));
    console.log(row('GET /api/user (the lightest signed-in request)', lightest));
    console.log(`\nend to end p99 < 10 ms: ${result.p99 < 10 ? 'met' : 'NOT met'}`);
    if (result.non2xx + lightest.non2xx > 0 || result.errors + lightest.errors > 0) process.exitCode = 1;
    const transactions = purchases.map((purchase) => JSON.parse(purchase.body).signedTransaction as string);
    console.log(`\nThe verification alone (the service's verifier in the bench's process, ${seconds} s):\n`);
    console.log(
      '| callers at once | verifications | per second | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|',
    );
    await verificationAlone(transactions, 1);
    if (connections > 1) await verificationAlone(transactions, connections);
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
  await apple.close();
}
