import { and, asc, desc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { publicCollectibleColumns } from '../../../db/columns.js';
import { collectibles, type PackRow, packPoolEntries, packs } from '../../../db/schema.js';
import type { PublicCollectible } from '../../../schemas/collectibles.js';
import type { Database } from '../database/index.js';
import { afterCursor, type PageRequest, toPage } from '../pagination.js';

/** SQL of packs and their pools. Writes run inside the caller's transaction. */

export const CATALOG_CHANNEL = 'pack_catalog';

export interface PoolRow {
  collectibleId: string;
  weight: number;
  remaining: number;
  collectible: PublicCollectible;
}

export async function findPack(
  db: Database,
  id: string,
  options: { lock?: boolean } = {},
): Promise<PackRow | undefined> {
  const query = db.select().from(packs).where(eq(packs.id, id));
  // The row lock serializes every change of one pack: two publishes, a publish and a pool edit, a
  // sale and a reservation. `no key update` rather than `update`: it need not wait for the key
  // share locks that rows referencing the pack take (an owned pack inserted by a purchase being
  // completed), and waiting for those deadlocked purchases being started with purchases being
  // completed, each stalled for PostgreSQL's deadlock_timeout (1 s) before one was retried.
  const [row] = options.lock ? await query.for('no key update') : await query;
  return row;
}

export async function insertPack(tx: Database, row: typeof packs.$inferInsert): Promise<PackRow> {
  const [created] = await tx.insert(packs).values(row).returning();
  return created as PackRow;
}

export async function updatePack(
  tx: Database,
  id: string,
  changes: Partial<typeof packs.$inferInsert>,
): Promise<PackRow> {
  const [row] = await tx.update(packs).set(changes).where(eq(packs.id, id)).returning();
  return row as PackRow;
}

/** A pack's pool, ordered by collectible id (the order draws walk), with each collectible. */
export async function poolOf(db: Database, packId: string): Promise<PoolRow[]> {
  return (await poolsOf(db, [packId])).get(packId) ?? [];
}

/** The pools of several packs in one query (an admin page lists up to 200 packs). */
export async function poolsOf(db: Database, packIds: string[]): Promise<Map<string, PoolRow[]>> {
  const pools = new Map<string, PoolRow[]>();
  if (packIds.length === 0) return pools;
  const rows = await db
    .select({
      packId: packPoolEntries.packId,
      collectibleId: packPoolEntries.collectibleId,
      weight: packPoolEntries.weight,
      remaining: packPoolEntries.remaining,
      collectible: publicCollectibleColumns,
    })
    .from(packPoolEntries)
    .innerJoin(collectibles, eq(collectibles.id, packPoolEntries.collectibleId))
    .where(inArray(packPoolEntries.packId, packIds))
    .orderBy(asc(packPoolEntries.collectibleId));
  for (const { packId, ...entry } of rows) {
    const pool = pools.get(packId);
    if (pool) pool.push(entry);
    else pools.set(packId, [entry]);
  }
  return pools;
}

/** Entries and copies left in each pack's pool, for admin lists. */
export async function poolSizes(
  db: Database,
  packIds: string[],
): Promise<Map<string, { entries: number; remaining: number }>> {
  if (packIds.length === 0) return new Map();
  const rows = await db
    .select({
      packId: packPoolEntries.packId,
      entries: sql<string>`count(*)`,
      remaining: sql<string>`sum(${packPoolEntries.remaining})`,
    })
    .from(packPoolEntries)
    .where(inArray(packPoolEntries.packId, packIds))
    .groupBy(packPoolEntries.packId);
  return new Map(rows.map((row) => [row.packId, { entries: Number(row.entries), remaining: Number(row.remaining) }]));
}

/** Copies left in each pack's pool. */
export async function remainingByPack(db: Database, packIds: string[]): Promise<Map<string, number>> {
  if (packIds.length === 0) return new Map();
  const rows = await db
    .select({ packId: packPoolEntries.packId, total: sql<string>`sum(${packPoolEntries.remaining})` })
    .from(packPoolEntries)
    .where(inArray(packPoolEntries.packId, packIds))
    .groupBy(packPoolEntries.packId);
  return new Map(rows.map((row) => [row.packId, Number(row.total)]));
}

/** The active packs whose pool holds the collectible (their public odds show it). */
export async function activePacksHolding(db: Database, collectibleId: string): Promise<string[]> {
  const rows = await db
    .select({ id: packs.id })
    .from(packPoolEntries)
    .innerJoin(packs, eq(packs.id, packPoolEntries.packId))
    .where(and(eq(packPoolEntries.collectibleId, collectibleId), eq(packs.status, 'active')));
  return rows.map((row) => row.id);
}

/** Adds an entry, or replaces the given fields of an existing one (keeping the others). */
export async function upsertPoolEntry(
  tx: Database,
  entry: { packId: string; collectibleId: string; quantity?: number; weight?: number; now: Date },
): Promise<void> {
  const replace: Partial<typeof packPoolEntries.$inferInsert> = {};
  if (entry.quantity !== undefined) replace.remaining = entry.quantity;
  if (entry.weight !== undefined) replace.weight = entry.weight;
  const insert = tx.insert(packPoolEntries).values({
    packId: entry.packId,
    collectibleId: entry.collectibleId,
    remaining: entry.quantity ?? 1,
    weight: entry.weight ?? 1,
    createdAt: entry.now,
  });
  await (Object.keys(replace).length > 0
    ? insert.onConflictDoUpdate({ target: [packPoolEntries.packId, packPoolEntries.collectibleId], set: replace })
    : insert.onConflictDoNothing());
}

export async function deletePoolEntry(tx: Database, packId: string, collectibleId: string): Promise<boolean> {
  const deleted = await tx
    .delete(packPoolEntries)
    .where(and(eq(packPoolEntries.packId, packId), eq(packPoolEntries.collectibleId, collectibleId)))
    .returning({ packId: packPoolEntries.packId });
  return deleted.length > 0;
}

/** Active packs, newest first; served by the partial indexes on status = 'active'. */
export async function listActivePacks(db: Database, filters: { teamId?: string }, page: PageRequest) {
  const conditions: SQL[] = [eq(packs.status, 'active')];
  if (filters.teamId !== undefined) conditions.push(eq(packs.teamId, filters.teamId));
  const rows = await db
    .select()
    .from(packs)
    .where(and(...conditions, afterCursor(packs.publishedAt, packs.id, page.after)))
    .orderBy(desc(packs.publishedAt), desc(packs.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.publishedAt as Date, id: row.id }));
}

export async function listPacks(
  db: Database,
  filters: { status?: PackRow['status']; teamId?: string },
  page: PageRequest,
) {
  const conditions: SQL[] = [];
  if (filters.status !== undefined) conditions.push(eq(packs.status, filters.status));
  if (filters.teamId !== undefined) conditions.push(eq(packs.teamId, filters.teamId));
  const rows = await db
    .select()
    .from(packs)
    .where(and(...conditions, afterCursor(packs.createdAt, packs.id, page.after)))
    .orderBy(desc(packs.createdAt), desc(packs.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

/** Tells every instance listening on PostgreSQL what the change affects (sent at commit). */
export async function notifyCatalogChange(tx: Database, payload: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${CATALOG_CHANNEL}, ${payload})`);
}
