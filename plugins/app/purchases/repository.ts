import { and, asc, eq, gt, inArray, isNull, lte, notInArray, or, sql } from 'drizzle-orm';
import { type PackRow, type PurchaseRow, packPoolEntries, packs, purchases, type UserPackRow, userPacks } from '../../../db/schema.js';
import type { Database } from '../db.js';

/** SQL of purchases and owned packs. Writes run inside the caller's transaction. */

/** A reservation counts while it is pending and not past its expiry, whether or not a job marked it. */
const live = (now: Date) => and(eq(purchases.status, 'pending'), gt(purchases.expiresAt, now));

/** Live reservations of each pack. */
export async function reservedByPack(db: Database, packIds: string[], now: Date): Promise<Map<string, number>> {
  if (packIds.length === 0) return new Map();
  const rows = await db
    .select({ packId: purchases.packId, reserved: sql<string>`count(*)` })
    .from(purchases)
    .where(and(inArray(purchases.packId, packIds), live(now)))
    .groupBy(purchases.packId);
  return new Map(rows.map((row) => [row.packId, Number(row.reserved)]));
}

export async function reservedOf(db: Database, packId: string, now: Date): Promise<number> {
  return (await reservedByPack(db, [packId], now)).get(packId) ?? 0;
}

/**
 * In one round trip: the copies left in the pack's pool, its live reservations, and the user's
 * purchases of it that count against maxPerUser (live reservations and completed ones).
 */
export async function salesCounts(db: Database, packId: string, userId: string, now: Date): Promise<{ remaining: number; reserved: number; held: number }> {
  const [row] = await db
    .select({
      remaining: sql<string>`(select coalesce(sum(${packPoolEntries.remaining}), 0) from ${packPoolEntries} where ${packPoolEntries.packId} = ${packId})`,
      reserved: sql<string>`(select count(*) from ${purchases} where ${and(eq(purchases.packId, packId), live(now))})`,
      held: sql<string>`(select count(*) from ${purchases} where ${and(eq(purchases.userId, userId), eq(purchases.packId, packId), or(eq(purchases.status, 'completed'), live(now)))})`,
    })
    .from(sql`(select 1) as one`);
  return { remaining: Number(row?.remaining ?? 0), reserved: Number(row?.reserved ?? 0), held: Number(row?.held ?? 0) };
}

export async function insertPurchase(tx: Database, row: typeof purchases.$inferInsert): Promise<PurchaseRow> {
  const [created] = await tx.insert(purchases).values(row).returning();
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
 * Counts a completed sale on the pack if it is active, taking its row lock (the table's check
 * refuses a sale past its supply). Answers the pack's status, or undefined for an unknown pack;
 * a pack that is not active is left unchanged.
 */
export async function countSale(tx: Database, packId: string): Promise<PackRow['status'] | undefined> {
  const [sold] = await tx
    .update(packs)
    .set({ sold: sql`${packs.sold} + 1` })
    .where(and(eq(packs.id, packId), eq(packs.status, 'active')))
    .returning({ status: packs.status });
  if (sold) return sold.status;
  const [other] = await tx.select({ status: packs.status }).from(packs).where(eq(packs.id, packId));
  return other?.status;
}

/**
 * Marks up to `limit` pending purchases past their expiry as expired. Rows another instance is
 * handling are skipped, so several instances can run this at once.
 */
export async function expirePurchases(db: Database, now: Date, limit: number): Promise<number> {
  const due = db
    .select({ id: purchases.id })
    .from(purchases)
    .where(and(eq(purchases.status, 'pending'), lte(purchases.expiresAt, now)))
    .orderBy(asc(purchases.expiresAt))
    .limit(limit)
    .for('update', { skipLocked: true });
  const expired = await db
    .update(purchases)
    .set({ status: 'expired', endedAt: now })
    .where(inArray(purchases.id, due))
    .returning({ id: purchases.id });
  return expired.length;
}

/** The user's oldest unopened pack of a pack but those excluded (its id only: the caller locks the one it takes). */
export async function oldestUnopened(db: Database, userId: string, packId: string, excluding: string[] = []): Promise<string | undefined> {
  const [row] = await db
    .select({ id: userPacks.id })
    .from(userPacks)
    .where(and(eq(userPacks.userId, userId), eq(userPacks.packId, packId), isNull(userPacks.openedAt), excluding.length > 0 ? notInArray(userPacks.id, excluding) : undefined))
    .orderBy(asc(userPacks.createdAt), asc(userPacks.id))
    .limit(1);
  return row?.id;
}
