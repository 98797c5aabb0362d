import { sql } from 'drizzle-orm';
import type { Database } from '../database/index.js';

const SEED_LOCK_KEY = 7_204_117_322;

/**
 * Holds the demo's lock until `tx` ends: instances starting together on one PostgreSQL load the
 * demo one after the other, so the first loads it and the others find it loaded. The loading runs
 * through the services in transactions of their own while `tx` waits idle, so this transaction
 * may stay idle longer than the pool's usual limit.
 */
export async function holdDemoLock(tx: Database): Promise<void> {
  await tx.execute(sql`set local idle_in_transaction_session_timeout = '5min'`);
  await tx.execute(sql`select pg_advisory_xact_lock(${SEED_LOCK_KEY})`);
}
