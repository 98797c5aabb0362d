import { createHash } from 'node:crypto';
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { idempotencyKeys } from '../../../db/schema.js';
import type { Database } from '../db.js';

/** SQL of the responses kept for Idempotency-Keys. */

export interface KeyScope {
  userId: string;
  route: string;
  key: string;
}

/** A 64-bit advisory lock id for a key's scope: collisions between live keys are negligible. */
function lockId(scope: KeyScope): string {
  return createHash('sha256').update(`${scope.userId}\n${scope.route}\n${scope.key}`).digest().readBigInt64BE(0).toString();
}

/**
 * Takes the key's lock for the rest of the transaction, or answers false at once when another
 * transaction (a request with the same key still running) holds it.
 */
export async function tryLockKey(tx: Database, scope: KeyScope): Promise<boolean> {
  const result = (await tx.execute(sql`select pg_try_advisory_xact_lock(${lockId(scope)}::bigint) as locked`)) as unknown as { rows: { locked: boolean }[] };
  return result.rows[0]?.locked === true;
}

export async function findStoredResponse(tx: Database, scope: KeyScope, since: Date) {
  const [row] = await tx
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.userId, scope.userId), eq(idempotencyKeys.route, scope.route), eq(idempotencyKeys.key, scope.key), gt(idempotencyKeys.createdAt, since)));
  return row;
}

/** Stores the response (replacing an expired one under the same key). */
export async function storeResponse(
  tx: Database,
  record: KeyScope & { requestHash: string; statusCode: number; response: unknown; createdAt: Date },
): Promise<void> {
  await tx
    .insert(idempotencyKeys)
    .values(record)
    .onConflictDoUpdate({
      target: [idempotencyKeys.userId, idempotencyKeys.route, idempotencyKeys.key],
      set: { requestHash: record.requestHash, statusCode: record.statusCode, response: record.response, createdAt: record.createdAt },
    });
}

/** Removes responses kept past their retention, at most `limit` of them. */
export async function deleteExpiredResponses(db: Database, before: Date, limit: number): Promise<number> {
  const result = (await db.execute(
    sql`delete from ${idempotencyKeys} where ctid in (select ctid from ${idempotencyKeys} where ${lt(idempotencyKeys.createdAt, before)} limit ${limit})`,
  )) as unknown as { rowCount: number | null };
  return result.rowCount ?? 0;
}
