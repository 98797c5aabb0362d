import { and, desc, eq, type SQL } from 'drizzle-orm';
import { type CollectibleRow, collectibles } from '../../../db/schema.js';
import type { Database } from '../database/index.js';
import { afterCursor, type PageRequest, toPage } from '../pagination.js';

/** SQL of the collectibles catalog. Writes run inside the caller's transaction. */

export async function insertCollectible(tx: Database, row: typeof collectibles.$inferInsert): Promise<CollectibleRow> {
  const [created] = await tx.insert(collectibles).values(row).returning();
  return created as CollectibleRow;
}

export async function findCollectible(db: Database, id: string, options: { lock?: boolean } = {}) {
  const query = db.select().from(collectibles).where(eq(collectibles.id, id));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

export async function updateCollectible(
  tx: Database,
  id: string,
  changes: Partial<typeof collectibles.$inferInsert>,
): Promise<CollectibleRow | undefined> {
  const [row] = await tx.update(collectibles).set(changes).where(eq(collectibles.id, id)).returning();
  return row;
}

export async function listCollectibles(
  db: Database,
  filters: { teamId?: string; rarity?: CollectibleRow['rarity'] },
  page: PageRequest,
) {
  const conditions: SQL[] = [];
  if (filters.teamId !== undefined) conditions.push(eq(collectibles.teamId, filters.teamId));
  if (filters.rarity !== undefined) conditions.push(eq(collectibles.rarity, filters.rarity));
  const rows = await db
    .select()
    .from(collectibles)
    .where(and(...conditions, afterCursor(collectibles.createdAt, collectibles.id, page.after)))
    .orderBy(desc(collectibles.createdAt), desc(collectibles.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}
