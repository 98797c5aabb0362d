import { type SQL, sql } from 'drizzle-orm';
import type { App } from '../../app.js';

/** Row locks held from outside a request, to stop a request at a known point. */

/** Runs `statement` (a SELECT ... FOR UPDATE) in a transaction of its own, holding its locks until `release`. */
export async function holdLock(app: App, statement: SQL): Promise<{ release: () => Promise<void> }> {
  let release: () => void = () => {};
  let locked: () => void = () => {};
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const done = app.db.transaction(async (tx) => {
    await tx.execute(statement);
    locked();
    await new Promise<void>((resolve) => (release = resolve));
  });
  await isLocked;
  return {
    release: async () => {
      release();
      await done;
    },
  };
}

/** Resolves once some session of this database waits for a lock (the request under test). */
export async function someoneWaitsForALock(app: App): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const result = (await app.db.orm.execute(
      sql`select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    )) as unknown as { rows: { waiting: number }[] };
    if ((result.rows[0]?.waiting ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no session ever waited for the lock');
}
