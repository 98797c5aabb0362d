import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { runningEmbeddedUrl } from '../plugins/app/database/embedded-postgres.js';
import { BENCH_SERVER_ENV, benchDatabase, benchToken, databaseKind, type RunningServer, startServer } from './lib.js';

/**
 * Outbound webhooks under failure, against the built server:
 *   npm run bench:webhooks-reliability -- [--db embedded|external] [--events 10000] [--concurrency 20] [--fail 0.33] [--kill-at 0.5]
 * A receiver on loopback answers 500 to a random `--fail` share of the attempts and 204 to the
 * rest; one platform endpoint takes `wallet.credited`; `--events` wallet adjustments are made
 * with `--concurrency` in flight, and when `--kill-at` of them are done the server is killed
 * with SIGKILL (adjustments and attempts in flight) and a new one started on the same database.
 * Then it waits until every `wallet.credited` event of the log has reached the receiver, and
 * reports what is lost (events never received with a 2xx) and duplicated (events whose 2xx came
 * more than once: the receiver dedupes them by `webhook-id`, which Standard Webhooks asks of it).
 *
 * The retry schedule runs for about a day (5 s, 5 min, 30 min ...), so the bench moves time for
 * the deliveries instead of waiting: twice a second it makes every pending delivery due now (its
 * `next_attempt_at`; a delivery leased to a sender keeps its lease), through SQL on the service's
 * database (the embedded server's address is read from its data folder after each start). A
 * delivery that fails all its attempts ends `failed`, as it would in production; the bench then
 * replays the failed ones, as an operator would (`POST /api/admin/webhooks/{id}/replay-failed`),
 * and reports how many that took.
 */

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '20' },
    fail: { type: 'string', default: '0.33' },
    'kill-at': { type: 'string', default: '0.5' },
    db: { type: 'string', default: 'external' },
  },
});
const kind = databaseKind(values.db);
const eventCount = Math.min(Number(values.events), 50_000);
const concurrency = Math.min(Number(values.concurrency), 200);
const failShare = Number(values.fail);
const killAfter = Math.floor(eventCount * Number(values['kill-at']));
const PORT = 3518;

/** 2xx answers per webhook-id, and the attempts answered 500. */
const delivered = new Map<string, number>();
let failedOnPurpose = 0;
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const id = String(request.headers['webhook-id']);
    if (Math.random() < failShare) {
      failedOnPurpose += 1;
      response.writeHead(500).end();
      return;
    }
    delivered.set(id, (delivered.get(id) ?? 0) + 1);
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const database = await benchDatabase(kind);
const env = { ...database.env, ...BENCH_SERVER_ENV, NODE_ENV: 'test', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' };
let server: RunningServer | undefined;
let moving = true;
let timeMover: Promise<void> = Promise.resolve();
/** SQL on the service's database; the embedded server is a new process after each restart, so it reconnects. */
let sql: pg.Client | undefined;
const connect = async () => {
  await sql?.end().catch(() => undefined);
  const url = database.env.DATABASE_URL ?? (await runningEmbeddedUrl(database.env.DATA_DIR as string));
  if (!url) throw new Error('no running database to connect to');
  sql = new pg.Client({ connectionString: url });
  sql.on('error', () => undefined);
  await sql.connect();
};
const query = async <Row extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<Row>> => {
  for (let tries = 0; ; tries++) {
    try {
      return await (sql as pg.Client).query<Row>(text);
    } catch (error) {
      if (tries >= 20) throw error;
      await sleep(500);
      await connect().catch(() => undefined);
    }
  }
};
try {
  server = await startServer(env, PORT);
  await connect();
  const admin = benchToken({ sub: 'bench-admin', role: 'admin' });
  const call = async (method: string, path: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${PORT}/api${path}`, {
      method,
      headers: {
        authorization: `Bearer ${admin}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  await fetch(`http://127.0.0.1:${PORT}/api/user`, {
    headers: { authorization: `Bearer ${benchToken({ sub: 'bench-fan' })}` },
  });
  const registered = await call('POST', '/admin/webhooks', { url: receiverUrl, events: ['wallet.credited'] });
  if (registered.status !== 201) throw new Error(`registering answered ${registered.status}`);
  const endpointId = ((await registered.json()) as { data: { endpoint: { id: string } } }).data.endpoint.id;

  timeMover = (async () => {
    while (moving) {
      await query(
        `update webhook_deliveries set next_attempt_at = now() where status = 'pending' and next_attempt_at > now()`,
      );
      await sleep(500);
    }
  })();

  const started = Date.now();
  let next = 0;
  let answered = 0;
  let lostAnswers = 0;
  let killed: Promise<void> | undefined;
  const restart = async () => {
    server?.child.kill('SIGKILL');
    await new Promise((resolve) => server?.child.once('exit', resolve));
    server = await startServer(env, PORT);
    await connect();
  };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < eventCount) {
        next += 1;
        if (next === killAfter) killed = restart();
        try {
          const res = await call('POST', '/admin/wallets/bench-fan/adjustments', { amount: 1, reason: 'bench' });
          if (res.status === 201) answered += 1;
          else lostAnswers += 1;
        } catch {
          // The server was killed under this request: it may or may not have committed.
          lostAnswers += 1;
        }
        if (killed) await killed;
      }
    }),
  );
  const writesMs = Date.now() - started;

  const expected = async () =>
    (await query<{ id: string }>(`select id::text from events where type = 'wallet.credited'`)).rows.map(
      (row) => row.id,
    );
  const missing = async () => (await expected()).filter((id) => !delivered.has(id));
  const deadline = Date.now() + 10 * 60_000;
  let waiting = await missing();
  let replays = 0;
  let replayed = 0;
  while (waiting.length > 0 && Date.now() < deadline) {
    const { rows } = await query<{ failed: number; pending: number }>(
      `select count(*) filter (where status = 'failed')::int as failed, count(*) filter (where status = 'pending')::int as pending from webhook_deliveries`,
    );
    // Every attempt of a delivery failed (17 in a row: at a third each, ~1 in 130 million): replay them.
    if (rows[0] && rows[0].failed > 0 && rows[0].pending === 0) {
      const replay = await call('POST', `/admin/webhooks/${endpointId}/replay-failed`, {
        since: new Date(started - 60_000).toISOString(),
      });
      if (replay.status !== 200)
        throw new Error(
          `replay of ${endpointId} answered ${replay.status}: ${await replay.text()}; the endpoint: ${await (await call('GET', `/admin/webhooks/${endpointId}`)).text()}`,
        );
      replays += 1;
      replayed += ((await replay.json()) as { data: { replayed: number } }).data.replayed;
    }
    await sleep(1_000);
    waiting = await missing();
  }
  moving = false;
  await timeMover;
  const totalMs = Date.now() - started;

  const events = (await expected()).length;
  const tail = (
    await query<{ most: number; eight: number }>(
      `select coalesce(max(attempts), 0)::int as most, count(*) filter (where attempts >= 8)::int as eight from webhook_deliveries`,
    )
  ).rows[0];
  const duplicated = [...delivered.values()].filter((count) => count > 1).length;
  const stray = [...delivered.keys()].filter((id) => !/^\d+$/.test(id)).length;
  console.log(
    `Outbound webhooks under failure, ${kind} PostgreSQL (Node ${process.version}): ${eventCount} adjustments, ${concurrency} in flight, the receiver failing ${Math.round(failShare * 100)}% of attempts at random, SIGKILL and restart after ${killAfter}\n`,
  );
  const twoHundreds = [...delivered.values()].reduce((sum, count) => sum + count, 0);
  console.log(
    '| events in the log | received (distinct) | lost | received twice or more (deduped) | requests received | answered 500 on purpose | deliveries that failed every attempt, replayed | writes s | all received after s |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  console.log(
    `| ${events} | ${delivered.size - stray} | ${waiting.length} | ${duplicated} | ${twoHundreds + failedOnPurpose} | ${failedOnPurpose} | ${replayed} (${replays} replay calls) | ${(writesMs / 1000).toFixed(0)} | ${(totalMs / 1000).toFixed(0)} |`,
  );
  console.log(
    `\nadjustments answered 201: ${answered}; answers lost to the kill (committed or not): ${lostAnswers}; events in the log: ${events}`,
  );
  console.log(
    `the most attempts one delivery took: ${tail?.most}; deliveries that took 8 or more (given up under the old 8-attempt schedule): ${tail?.eight}`,
  );
  if (waiting.length > 0) process.exitCode = 1;
} finally {
  moving = false;
  await timeMover.catch(() => undefined);
  await server?.stop();
  await sql?.end().catch(() => undefined);
  await database.cleanup();
  await new Promise((resolve) => receiver.close(resolve));
}
