import { sql } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../app.js';
import { bearer, buildTestApp, tokenFor } from '../../support/app.js';

/**
 * CATALOG_YIELD_WRITES: while that many writes are in progress on the instance, public catalog
 * reads wait 100 ms before they are answered; other reads do not, and nothing is refused.
 */

const admin = bearer(tokenFor('root', { role: 'admin' }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const hold = (app: App, ms: number) => app.db.transaction((tx) => tx.execute(sql`select pg_sleep(${ms / 1000})`));

async function timed(app: App, url: string) {
  const started = performance.now();
  const res = await app.inject({ method: 'GET', url });
  return { status: res.statusCode, ms: performance.now() - started };
}

/**
 * How much longer a (cached) catalog read takes than a health check made beside it: about 0
 * unless the catalog was held 100 ms. Relative, so a busy machine slowing both does not count.
 */
async function catalogExtraMs(app: App): Promise<number> {
  const [catalog, health] = await Promise.all([timed(app, '/api/packs'), timed(app, '/api/health')]);
  return catalog.ms - health.ms;
}

/** Signs the admin in and puts the catalog in the cache, so no read below waits for the database. */
async function warm(app: App): Promise<void> {
  await app.inject({ method: 'GET', url: '/api/user', headers: admin });
  await app.inject({ method: 'GET', url: '/api/packs' });
}

t.test('catalog reads wait while writes are in progress; the writes and other reads do not', async (t) => {
  const app = await buildTestApp(t, {
    MAX_EVENT_LOOP_DELAY: '10 seconds',
    CATALOG_MAX_EVENT_LOOP_DELAY: '0',
    CATALOG_YIELD_WRITES: '2',
  });
  await warm(app);
  t.ok((await catalogExtraMs(app)) < 90, 'no writes: the catalog answers at once');

  // Every connection busy for 600 ms, so two writes stay in progress behind them.
  const holders = Array.from({ length: 10 }, () => hold(app, 600));
  await sleep(50);
  const writes = [1, 2].map((n) =>
    app.inject({ method: 'POST', url: '/api/admin/collectibles', headers: admin, payload: { name: `Card ${n}` } }),
  );
  await sleep(50);
  const [catalog, health] = await Promise.all([timed(app, '/api/packs'), timed(app, '/api/health')]);
  t.equal(catalog.status, 200, 'the catalog is answered');
  t.ok(catalog.ms >= 100, `after waiting its turn (${Math.round(catalog.ms)} ms)`);
  t.equal(health.status, 200);
  t.ok(catalog.ms - health.ms >= 50, `other reads are not held (${Math.round(health.ms)} ms)`);

  await Promise.all(holders);
  t.same(
    (await Promise.all(writes)).map((res) => res.statusCode),
    [201, 201],
    'the writes are served',
  );
  t.ok((await catalogExtraMs(app)) < 90, 'writes done: the catalog answers at once again');
});

t.test('CATALOG_YIELD_WRITES=0 never holds the catalog on that count', async (t) => {
  const app = await buildTestApp(t, {
    MAX_EVENT_LOOP_DELAY: '10 seconds',
    CATALOG_MAX_EVENT_LOOP_DELAY: '0',
    CATALOG_YIELD_WRITES: '0',
  });
  await warm(app);
  const holders = Array.from({ length: 10 }, () => hold(app, 400));
  await sleep(50);
  const writes = [1, 2].map((n) =>
    app.inject({ method: 'POST', url: '/api/admin/collectibles', headers: admin, payload: { name: `Card ${n}` } }),
  );
  await sleep(50);
  t.ok((await catalogExtraMs(app)) < 90, 'answered at once');
  await Promise.all([...holders, ...writes]);
});
