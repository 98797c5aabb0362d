import { and, asc, eq, gt, inArray, lte, or, sql } from 'drizzle-orm';
import { type PackRow, type PurchaseRow, packPoolEntries, packs, purchases, type UserPackRow, userPacks } from '../../../db/schema.js';
import type { Database } from '../db.js';

/** SQL of purchases and owned packs. Writes run inside the caller's transaction. */

/**
 * The database's clock, the one clock every instance shares: expiry is decided by it alone, so
 * instances whose clocks disagree never count one reservation differently.
 */
const databaseNow = sql`clock_timestamp()`;

/** A reservation counts while it is pending and not past its expiry, whether or not a job marked it. */
const live = () => and(eq(purchases.status, 'pending'), gt(purchases.expiresAt, databaseNow));

/** Live reservations of each pack. */
export async function reservedByPack(db: Database, packIds: string[]): Promise<Map<string, number>> {
  if (packIds.length === 0) return new Map();
  const rows = await db
    .select({ packId: purchases.packId, reserved: sql<string>`count(*)` })
    .from(purchases)
    .where(and(inArray(purchases.packId, packIds), live()))
    .groupBy(purchases.packId);
  return new Map(rows.map((row) => [row.packId, Number(row.reserved)]));
}

export async function reservedOf(db: Database, packId: string): Promise<number> {
  return (await reservedByPack(db, [packId])).get(packId) ?? 0;
}

/**
 * In one round trip: the copies left in the pack's pool, its live reservations, and the user's
 * purchases of it that count against maxPerUser (live reservations and completed ones).
 */
export async function salesCounts(db: Database, packId: string, userId: string): Promise<{ remaining: number; reserved: number; held: number }> {
  const [row] = await db
    .select({
      remaining: sql<string>`(select coalesce(sum(${packPoolEntries.remaining}), 0) from ${packPoolEntries} where ${packPoolEntries.packId} = ${packId})`,
      reserved: sql<string>`(select count(*) from ${purchases} where ${and(eq(purchases.packId, packId), live())})`,
      held: sql<string>`(select count(*) from ${purchases} where ${and(eq(purchases.userId, userId), eq(purchases.packId, packId), or(eq(purchases.status, 'completed'), live()))})`,
    })
    .from(sql`(select 1) as one`);
  return { remaining: Number(row?.remaining ?? 0), reserved: Number(row?.reserved ?? 0), held: Number(row?.held ?? 0) };
}

/** A purchase starting now by the database's clock, expiring `ttlMs` later. */
export async function insertPurchase(tx: Database, row: Omit<typeof purchases.$inferInsert, 'createdAt' | 'expiresAt'>, ttlMs: number): Promise<PurchaseRow> {
  const [created] = await tx
    .insert(purchases)
    .values({ ...row, createdAt: sql`statement_timestamp()`, expiresAt: sql`statement_timestamp() + ${ttlMs} * interval '1 millisecond'` })
    .returning();
  return created as PurchaseRow;
}

/** The caller's purchase of this pack, locked for the rest of the transaction when asked. */
export async function findPurchase(db: Database, key: { id: string; userId: string; packId: string }, options: { lock?: boolean } = {}) {
  const query = db
    .select()
    .from(purchases)
    .where(and(eq(purchases.id, key.id), eq(purchases.userId, key.userId), eq(purchases.packId, key.packId)));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

export async function updatePurchase(tx: Database, id: string, changes: Partial<typeof purchases.$inferInsert>): Promise<PurchaseRow> {
  const [row] = await tx.update(purchases).set(changes).where(eq(purchases.id, id)).returning();
  return row as PurchaseRow;
}

export async function insertUserPack(tx: Database, row: typeof userPacks.$inferInsert): Promise<UserPackRow> {
  const [created] = await tx.insert(userPacks).values(row).returning();
  return created as UserPackRow;
}

export async function userPackOfPurchase(db: Database, purchaseId: string): Promise<UserPackRow | undefined> {
  const [row] = await db.select().from(userPacks).where(eq(userPacks.purchaseId, purchaseId));
  return row;
}

/**
 * Counts the purchase's sale on the pack, taking the pack's row lock, if the pack is active and
 * the reservation has not expired by the database's clock (past its expiry it no longer held the
 * pack, and a start may have sold it again). The table's check refuses a sale past the supply.
 * Answers `sold`, else why not: the pack's status, `expired`, or undefined for an unknown pack.
 */
export async function countSale(tx: Database, packId: string, purchaseId: string): Promise<'sold' | 'expired' | PackRow['status'] | undefined> {
  const reservationLive = sql`exists (select 1 from ${purchases} where ${purchases.id} = ${purchaseId} and ${purchases.expiresAt} > ${databaseNow})`;
  const [sold] = await tx
    .update(packs)
    .set({ sold: sql`${packs.sold} + 1` })
    .where(and(eq(packs.id, packId), eq(packs.status, 'active'), reservationLive))
    .returning({ id: packs.id });
  if (sold) return 'sold';
  const [other] = await tx.select({ status: packs.status }).from(packs).where(eq(packs.id, packId));
  if (!other) return undefined;
  return other.status === 'active' ? 'expired' : other.status;
}

/**
 * Marks up to `limit` pending purchases past their expiry as expired. Rows another instance is
 * handling are skipped, so several instances can run this at once.
 */
export async function expirePurchases(db: Database, limit: number): Promise<number> {
  const due = db
    .select({ id: purchases.id })
    .from(purchases)
    .where(and(eq(purchases.status, 'pending'), lte(purchases.expiresAt, databaseNow)))
    .orderBy(asc(purchases.expiresAt))
    .limit(limit)
    .for('update', { skipLocked: true });
  const expired = await db
    .update(purchases)
    .set({ status: 'expired', endedAt: databaseNow })
    .where(inArray(purchases.id, due))
    .returning({ id: purchases.id });
  return expired.length;
}
