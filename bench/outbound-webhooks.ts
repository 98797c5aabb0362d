import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { BENCH_SERVER_ENV, benchDatabase, benchToken, databaseKind, median, percentile, startServer } from './lib.js';

/**
 * Outbound webhooks' lag, against the built server and a receiver on loopback:
 *   npm run bench:outbound-webhooks -- --db embedded|external [--events 1000] [--concurrency 20] [--rate N]
 * Registers a platform endpoint for `wallet.credited`, then makes `--events` wallet adjustments
 * with `--concurrency` in flight (at most `--rate` a second when given: the n-th starts no
 * earlier than n / rate seconds after the first). For each, the lag is the time from the adjustment's answer (its
 * transaction has committed) to the receiver getting its delivery. Reports the median, p99 and
 * the worst lag, and checks that every event arrived exactly once after deduping by webhook-id.
 * The server runs with NODE_ENV=test: private targets (the loopback receiver) are refused in production.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    events: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '20' },
    /** Events a second (0: as fast as `--concurrency` allows). */
    rate: { type: 'string', default: '0' },
  },
});
const kind = databaseKind(values.db);
const eventCount = Math.min(Number(values.events), 20_000);
const concurrency = Math.min(Number(values.concurrency), 200);
const rate = Number(values.rate);

const received = new Map<string, number>();
let requests = 0;
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    requests += 1;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { entryId: string } };
    if (!received.has(body.data.entryId)) received.set(body.data.entryId, performance.now());
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const database = await benchDatabase(kind);
try {
  const server = await startServer(
    {
      ...database.env,
      ...BENCH_SERVER_ENV,
      NODE_ENV: 'test',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      CRON_INTERNAL: 'false',
    },
    3517,
  );
  try {
    const admin = benchToken({ sub: 'bench-admin', role: 'admin' });
    const post = async (path: string, body: unknown, status: number) => {
      const res = await fetch(`${server.url}/api${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== status) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { data: Record<string, unknown> }).data;
    };
    await fetch(`${server.url}/api/user`, { headers: { authorization: `Bearer ${benchToken({ sub: 'bench-fan' })}` } });
    await post('/admin/webhooks', { url: receiverUrl, events: ['wallet.credited'] }, 201);

    const committedAt = new Map<string, number>();
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < eventCount) {
          const slot = next++;
          const wait = started + (rate > 0 ? (slot * 1000) / rate : 0) - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          const entry = await post('/admin/wallets/bench-fan/adjustments', { amount: 1, reason: 'bench' }, 201);
          committedAt.set(entry.id as string, performance.now());
        }
      }),
    );
    const deadline = Date.now() + 60_000;
    while (received.size < eventCount && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const wallMs = performance.now() - started;
    const lags = [...committedAt].map(([id, at]) => (received.get(id) ?? Number.POSITIVE_INFINITY) - at);

    console.log(
      `Outbound webhooks on ${kind} PostgreSQL: ${eventCount} wallet.credited events, ${concurrency} adjustments in flight${rate > 0 ? ` at most ${rate} a second` : ''}, one platform endpoint (Node ${process.version})\n`,
    );
    console.log('| events | delivered per second | median lag ms | p99 lag ms | worst lag ms | requests |');
    console.log('|---|---|---|---|---|---|');
    console.log(
      `| ${eventCount} | ${((received.size / wallMs) * 1000).toFixed(0)} | ${median(lags).toFixed(0)} | ${percentile(lags, 99).toFixed(0)} | ${Math.max(...lags).toFixed(0)} | ${requests} |`,
    );
    console.log(`\nreceived ${received.size} distinct events of ${eventCount}, in ${requests} requests`);
    if (received.size !== eventCount) process.exitCode = 1;
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
  await new Promise((resolve) => receiver.close(resolve));
}
