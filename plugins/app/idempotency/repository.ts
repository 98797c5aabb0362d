import { createHash } from 'node:crypto';
import { and, gt, lt, sql } from 'drizzle-orm';
import { idempotencyKeys } from '../../../db/schema.js';
import type { Database } from '../database/index.js';
import { rowsOf } from '../rows.js';

/** SQL of the responses kept for Idempotency-Keys. */

export interface KeyScope {
  userId: string;
  route: string;
  key: string;
}

/** A 64-bit advisory lock id for a key's scope: collisions between live keys are negligible. */
function lockId(scope: KeyScope): string {
  return createHash('sha256')
    .update(`${scope.userId}\n${scope.route}\n${scope.key}`)
    .digest()
    .readBigInt64BE(0)
    .toString();
}

/**
 * Takes each key's lock for the rest of the transaction, or answers false for a key another
 * transaction (a request with the same key still running) holds, without waiting. The scopes must
 * be distinct: a lock this transaction already holds answers true.
 */
export async function tryLockKeys(tx: Database, scopes: readonly KeyScope[]): Promise<boolean[]> {
  if (scopes.length === 0) return [];
  const rows = rowsOf<{ locked: boolean }>(
    await tx.execute(
      sql`select pg_try_advisory_xact_lock(k.id) as locked from unnest(${sql.param(scopes.map(lockId))}::bigint[]) with ordinality as k(id, n) order by k.n`,
    ),
  );
  return rows.map((row) => row.locked === true);
}

export async function tryLockKey(tx: Database, scope: KeyScope): Promise<boolean> {
  const [locked] = await tryLockKeys(tx, [scope]);
  return locked === true;
}

export type StoredResponse = typeof idempotencyKeys.$inferSelect;

/** One string per scope, to find a scope's stored response. */
export const scopeKey = (scope: KeyScope) => `${scope.userId}\n${scope.route}\n${scope.key}`;

/** The responses stored since `since` for the scopes, by their scope (see `scopeKey`). */
export async function findStoredResponses(
  tx: Database,
  scopes: readonly KeyScope[],
  since: Date,
): Promise<Map<string, StoredResponse>> {
  if (scopes.length === 0) return new Map();
  const rows = await tx
    .select()
    .from(idempotencyKeys)
    .where(
      and(
        sql`(${idempotencyKeys.userId}, ${idempotencyKeys.route}, ${idempotencyKeys.key}) in (select * from unnest(${sql.param(scopes.map((scope) => scope.userId))}::text[], ${sql.param(scopes.map((scope) => scope.route))}::text[], ${sql.param(scopes.map((scope) => scope.key))}::text[]))`,
        gt(idempotencyKeys.createdAt, since),
      ),
    );
  return new Map(rows.map((row) => [scopeKey(row), row]));
}

export async function findStoredResponse(
  tx: Database,
  scope: KeyScope,
  since: Date,
): Promise<StoredResponse | undefined> {
  return (await findStoredResponses(tx, [scope], since)).get(scopeKey(scope));
}

/** Stores the responses (replacing expired ones under the same keys), in one statement. */
export async function storeResponses(
  tx: Database,
  records: readonly (KeyScope & { requestHash: string; statusCode: number; response: unknown; createdAt: Date })[],
): Promise<void> {
  if (records.length === 0) return;
  await tx
    .insert(idempotencyKeys)
    .values([...records])
    .onConflictDoUpdate({
      target: [idempotencyKeys.userId, idempotencyKeys.route, idempotencyKeys.key],
      set: {
        requestHash: sql`excluded.request_hash`,
        statusCode: sql`excluded.status_code`,
        response: sql`excluded.response`,
        createdAt: sql`excluded.created_at`,
      },
    });
}

/** Stores the response (replacing an expired one under the same key). */
export async function storeResponse(
  tx: Database,
  record: KeyScope & { requestHash: string; statusCode: number; response: unknown; createdAt: Date },
): Promise<void> {
  await storeResponses(tx, [record]);
}

/** Removes responses kept past their retention, at most `limit` of them. */
export async function deleteExpiredResponses(db: Database, before: Date, limit: number): Promise<number> {
  const result = (await db.execute(
    sql`delete from ${idempotencyKeys} where ctid in (select ctid from ${idempotencyKeys} where ${lt(idempotencyKeys.createdAt, before)} limit ${limit})`,
  )) as unknown as { rowCount: number | null };
  return result.rowCount ?? 0;
}
