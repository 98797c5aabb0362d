import { eq, sql } from 'drizzle-orm';
import t from 'tap';
import { packs } from '../../../../db/schema.js';
import { buildTestApp } from '../../../support/app.js';
import { packAction, packInStatus } from '../../../support/catalog.js';
import { holdLock, someoneWaitsForALock } from '../../../support/locks.js';

/**
 * When the database cannot do the work (its session terminated, a timeout, a conflict that
 * outlasted its retries) the caller gets 503 `database_unavailable` with Retry-After, not a 500:
 * the request was fine and a retry may succeed. Nothing is half written.
 */

t.test(
  'a publish whose database session is terminated while it waits answers 503, writes nothing, and a retry succeeds',
  async (t) => {
    const app = await buildTestApp(t);
    const { pack } = await packInStatus(app, 'draft', { pool: [{ quantity: 5 }] });

    const lock = await holdLock(app, sql`select id from packs where id = ${pack.id} for update`);
    const publish = packAction(app, pack.id, { action: 'publish' });
    await someoneWaitsForALock(app);
    // As an operator, a failover or a crash would: the waiting session is ended by the server.
    await app.db.orm.execute(
      sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    await lock.release();

    const res = await publish;
    t.equal(res.statusCode, 503, `answered ${res.statusCode}`);
    t.equal(res.json().error.code, 'database_unavailable');
    t.equal(res.headers['retry-after'], '2');
    const [row] = await app.db.orm.select().from(packs).where(eq(packs.id, pack.id));
    t.equal(row?.status, 'draft', 'the pack is unchanged');

    const retry = await packAction(app, pack.id, { action: 'publish' });
    t.equal(retry.statusCode, 200, 'the pool replaced the lost connection: the retry publishes');
  },
);
