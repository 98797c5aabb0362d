import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import t from 'tap';
import { bearer, buildTestApp, createTestDatabase } from '../../../support/app.js';
import { signIn } from '../../../support/economy.js';
import { startTcpProxyTo } from '../../../support/tcp-proxy.js';

/**
 * DATABASE_QUEUE_LIMIT: work that would wait longer than the limit for a pool connection is
 * refused at once with 503 `overloaded`, instead of queueing for seconds; work that fits waits.
 */

const hold = (app: Awaited<ReturnType<typeof buildTestApp>>, ms: number) =>
  app.db.transaction((tx) => tx.execute(sql`select pg_sleep(${ms / 1000})`));

t.test('work that would wait past the limit is refused at once; the rest is served', async (t) => {
  const app = await buildTestApp(t, { DATABASE_QUEUE_LIMIT: '100 ms' });
  const fan = await signIn(app, 'queue-fan');
  // Teach the pool how long a connection is held: 300 ms.
  await Promise.all(Array.from({ length: 10 }, () => hold(app, 300)));

  // Every connection held, and more asking: the first three wait ((0..2 + 1) / 10 x 300 ms, within
  // the limit), the others are refused at once; those three are refused after 100 ms of waiting.
  const holders = Promise.allSettled(Array.from({ length: 15 }, () => hold(app, 300)));
  await sleep(50);
  const started = performance.now();
  const refused = await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) });
  const refusedMs = performance.now() - started;
  t.equal(refused.statusCode, 503);
  t.equal(refused.json().error.code, 'overloaded');
  t.equal(refused.headers['retry-after'], '1', 'retry in a second');
  t.ok(refusedMs < 100, `refused at once (${Math.round(refusedMs)} ms), not after a wait`);
  // Readiness is not refused as overload: a busy instance still works, and a load balancer that
  // took it out would only pile its load onto the others. It waits its turn instead.
  const ready = await app.inject({ method: 'GET', url: '/api/health/ready' });
  t.equal(ready.statusCode, 200, 'ready while the queue is over the limit');
  const outcomes = await holders;
  t.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 10, 'the ten that got a connection');

  // The queue drained: served again.
  const served = await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) });
  t.equal(served.statusCode, 200);
});

t.test('work that fits within the limit waits its turn and is served', async (t) => {
  // A limit far above the wait, so a slow machine cannot push the wait past it.
  const app = await buildTestApp(t, { DATABASE_QUEUE_LIMIT: '3 s' });
  const fan = await signIn(app, 'queue-fan');
  await Promise.all(Array.from({ length: 10 }, () => hold(app, 300)));
  // Every connection held and none waiting: (0 + 1) / 10 x 300 ms = 30 ms expected.
  const busy = Array.from({ length: 10 }, () => hold(app, 300));
  await sleep(50);
  const queued = await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) });
  t.equal(queued.statusCode, 200, 'queued behind the held connections, then served');
  await Promise.all(busy);
});

t.test('work admitted to the queue waits no longer than the limit', async (t) => {
  const app = await buildTestApp(t, { DATABASE_QUEUE_LIMIT: '200 ms' });
  const fan = await signIn(app, 'queue-fan');
  // Connections have been held for a few ms so far, so a crowd arriving at once is admitted:
  // (0 + 1) / 10 x a few ms is well within the limit. Then each connection is held for 1.5 s.
  const holders = Array.from({ length: 10 }, () => hold(app, 1500));
  await sleep(50);
  const started = performance.now();
  const res = await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) });
  const waitedMs = performance.now() - started;
  t.equal(res.statusCode, 503, 'refused once it has waited the limit');
  t.equal(res.json().error.code, 'overloaded');
  t.ok(
    waitedMs >= 190 && waitedMs < 1200,
    `after the limit (${Math.round(waitedMs)} ms), not when a connection came free`,
  );
  await Promise.all(holders);
  // The connection it no longer wanted went back to the pool: ten holds of 500 ms still run side
  // by side (with one connection lost, the tenth would wait for the first: 1 s).
  const together = performance.now();
  await Promise.all(Array.from({ length: 10 }, () => hold(app, 500)));
  const togetherMs = performance.now() - together;
  t.ok(togetherMs < 900, `ten connections at once (${Math.round(togetherMs)} ms)`);
  const served = await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) });
  t.equal(served.statusCode, 200);
});

t.test(
  'work opening a new connection is not refused, however slow the opening; work queued behind it is',
  async (t) => {
    const database = await createTestDatabase();
    t.teardown(() => database.drop());
    const proxy = await startTcpProxyTo(database.url);
    t.teardown(() => proxy.close());
    const app = await buildTestApp(t, { DATABASE_URL: proxy.urlFor(database.url), DATABASE_QUEUE_LIMIT: '200 ms' });
    const fan = await signIn(app, 'queue-fan');
    // Connections open slowly (a slow network, a busy server): nothing gets through for 600 ms.
    proxy.partition();
    const holders = Promise.allSettled(Array.from({ length: 10 }, () => hold(app, 100)));
    await sleep(50);
    const queued = app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) });
    await sleep(550);
    proxy.restore();
    const outcomes = await holders;
    t.same(
      outcomes.map((outcome) => (outcome.status === 'fulfilled' ? 'served' : String(outcome.reason))),
      Array(10).fill('served'),
      'the ten that found room to open a connection were served once it opened',
    );
    const refused = await queued;
    t.equal(refused.statusCode, 503, 'the one queued behind them was refused after the limit');
    t.equal(refused.json().error.code, 'overloaded');
  },
);

t.test('DATABASE_QUEUE_LIMIT=0 queues everything', async (t) => {
  const app = await buildTestApp(t, { DATABASE_QUEUE_LIMIT: '0' });
  const fan = await signIn(app, 'queue-fan');
  await Promise.all(Array.from({ length: 10 }, () => hold(app, 300)));
  const holders = Array.from({ length: 15 }, () => hold(app, 300));
  await sleep(50);
  const res = await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) });
  t.equal(res.statusCode, 200, 'waited its turn');
  await Promise.all(holders);
});
