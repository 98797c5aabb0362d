import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../database/index.js';
import { rowsOf, textArray } from '../rows.js';

/**
 * SQL of reservations: the live count of each pack, and reclaiming the expired ones (marked
 * expired and taken off their pack's kept count, under the pack's row lock, in expiry order).
 * See repository.ts for the count and the order locks are taken in.
 */

/**
 * The database's clock, the one clock every instance shares: expiry is decided by it alone, so
 * instances whose clocks disagree never count one reservation differently.
 */
export const databaseNow = sql`clock_timestamp()`;

/** Live reservations of each pack: the kept count, less the expired ones not reclaimed yet (found through the pending index by expiry). */
export async function reservedByPack(db: Database, packIds: string[]): Promise<Map<string, number>> {
  if (packIds.length === 0) return new Map();
  const rows = rowsOf<{ id: string; live: number }>(
    await db.execute(sql`
      select k.id, k.reserved - (select count(*) from purchases u where u.pack_id = k.id and u.status = 'pending' and u.expires_at <= ${databaseNow})::int as live
      from packs k where k.id = any(${textArray(packIds)})`),
  );
  return new Map(rows.map((row) => [row.id, row.live]));
}

export async function reservedOf(db: Database, packId: string): Promise<number> {
  return (await reservedByPack(db, [packId])).get(packId) ?? 0;
}

/** Up to `limit` of the pack's pending purchases past their expiry, oldest first, skipping rows another transaction holds. */
export const dueForReclaim = (packId: string, limit: number): SQL => sql`
  select id from purchases where pack_id = ${packId} and status = 'pending' and expires_at <= ${databaseNow}
  order by expires_at limit ${limit} for update skip locked`;

/**
 * Marks up to `limit` of the pack's expired reservations expired and takes them off its count, in
 * one statement; answers how many. The caller holds the pack's row lock.
 */
export async function reclaimExpired(tx: Database, packId: string, limit: number): Promise<number> {
  const [row] = rowsOf<{ reclaimed: number }>(
    await tx.execute(sql`
      with reclaimed as (
        update purchases p set status = 'expired', ended_at = ${databaseNow} where p.id in (${dueForReclaim(packId, limit)}) returning 1),
      counted as (
        update packs set reserved = reserved - (select count(*) from reclaimed) where id = ${packId} and exists (select 1 from reclaimed) returning 1)
      select (select count(*) from reclaimed)::int as reclaimed`),
  );
  return row?.reclaimed ?? 0;
}

/**
 * Reclaims every expired reservation of the pack, a bounded round at a time, and answers its live
 * reservations (the kept count, exact now). The caller holds the pack's row lock and has read
 * `kept` under it.
 */
export async function settleReservations(tx: Database, packId: string, kept: number, round = 500): Promise<number> {
  let live = kept;
  for (let reclaimed = round; reclaimed === round; live -= reclaimed)
    reclaimed = await reclaimExpired(tx, packId, round);
  return live;
}

/**
 * Reclaims up to `limit` of the pack's expired reservations in a transaction of its own that
 * holds the pack's row lock only for that: answers how many (0 for an unknown pack).
 */
async function reclaimInTransaction(db: Database, packId: string, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    const locked = rowsOf(await tx.execute(sql`select 1 from packs where id = ${packId} for no key update`));
    return locked.length === 0 ? 0 : reclaimExpired(tx as unknown as Database, packId, limit);
  });
}

/**
 * Reclaims every expired reservation of the pack, a round of `round` at a time, each round a
 * short transaction of its own: a change of the pack that must count live reservations exactly
 * then finds little left to reclaim under its lock, and the pack's sales go on between rounds.
 */
export async function reclaimAllExpired(db: Database, packId: string, round = 500): Promise<number> {
  let total = 0;
  for (let reclaimed = round; reclaimed === round; total += reclaimed)
    reclaimed = await reclaimInTransaction(db, packId, round);
  return total;
}

/**
 * Sets each pack's kept count to its pending purchases, pack by pack under each pack's lock, after
 * reclaiming its expired reservations; answers the packs whose count was wrong. For an operator
 * after an upgrade from a release that did not keep the count (or a downgrade and upgrade again):
 * on a database the service has kept, it changes nothing. With `release`, sets every count to 0
 * instead, which is what a release that does not keep it needs before it runs here again.
 */
export async function recountReservations(
  db: Database,
  options: { release?: boolean } = {},
): Promise<{ packId: string; was: number; now: number }[]> {
  const packIds = rowsOf<{ id: string }>(await db.execute(sql`select id from packs order by id`)).map((row) => row.id);
  const corrected: { packId: string; was: number; now: number }[] = [];
  for (const packId of packIds) {
    if (!options.release) await reclaimAllExpired(db, packId);
    // The count is read by a statement of its own, once the lock is held: one that waited for the
    // lock would count the purchases as they were when it began.
    const row = await db.transaction(async (tx) => {
      const [locked] = rowsOf<{ reserved: number }>(
        await tx.execute(sql`select reserved from packs where id = ${packId} for no key update`),
      );
      if (!locked) return undefined;
      const [counted] = rowsOf<{ pending: number }>(
        await tx.execute(
          sql`select count(*)::int as pending from purchases where pack_id = ${packId} and status = 'pending'`,
        ),
      );
      const now = options.release ? 0 : (counted?.pending ?? 0);
      if (now === locked.reserved) return undefined;
      await tx.execute(sql`update packs set reserved = ${now} where id = ${packId}`);
      return { was: locked.reserved, now };
    });
    if (row) corrected.push({ packId, ...row });
  }
  return corrected;
}

/**
 * Marks up to `limit` reservations past their expiry as expired, pack by pack (the one whose
 * reservation expired first, then the next), each pack's in a transaction of its own holding its
 * row lock: answers how many. Rows a complete or a cancel holds are skipped (and so are they when
 * picking the next pack), so several instances, and the starts of a hot pack, can run beside it.
 */
export async function expirePurchases(db: Database, limit: number): Promise<number> {
  let expired = 0;
  while (expired < limit) {
    const [due] = rowsOf<{ pack_id: string }>(
      await db.execute(
        sql`select pack_id from purchases where status = 'pending' and expires_at <= ${databaseNow} order by expires_at limit 1 for update skip locked`,
      ),
    );
    if (!due) break;
    const reclaimed = await reclaimInTransaction(db, due.pack_id, limit - expired);
    // Its reservations were taken meanwhile (by a start, or a complete holding them): the next
    // run finds what remains.
    if (reclaimed === 0) break;
    expired += reclaimed;
  }
  return expired;
}
