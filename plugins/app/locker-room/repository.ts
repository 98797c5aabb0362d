import { and, desc, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import { collectibles, pulls, userPacks, users } from '../../../db/schema.js';
import type { Rarity } from '../../../schemas/enums.js';
import { publicCollectibleColumns } from '../../../db/columns.js';
import type { Database } from '../database/index.js';
import { afterCursor, type PageRequest, toPage } from '../pagination.js';

/** SQL of a user's locker room: pulls, score and unopened packs. */

export async function pullsByRarity(db: Database, userId: string): Promise<Map<Rarity, number>> {
  const rows = await db
    .select({ rarity: collectibles.rarity, count: sql<string>`count(*)` })
    .from(pulls)
    .innerJoin(collectibles, eq(collectibles.id, pulls.collectibleId))
    .where(eq(pulls.userId, userId))
    .groupBy(collectibles.rarity);
  return new Map(rows.map((row) => [row.rarity, Number(row.count)]));
}

export async function scoreOf(db: Database, userId: string): Promise<number> {
  const [row] = await db.select({ score: users.score }).from(users).where(eq(users.id, userId));
  return row?.score ?? 0;
}

export async function unopenedCount(db: Database, userId: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<string>`count(*)` })
    .from(userPacks)
    .where(and(eq(userPacks.userId, userId), isNull(userPacks.openedAt), isNull(userPacks.revokedAt)));
  return Number(row?.count ?? 0);
}

/** The user's pulls, newest first, with their collectibles. */
export async function listPulls(
  db: Database,
  userId: string,
  filters: { rarity?: Rarity; teamId?: string },
  page: PageRequest,
) {
  const conditions: SQL[] = [eq(pulls.userId, userId)];
  if (filters.rarity !== undefined) conditions.push(eq(collectibles.rarity, filters.rarity));
  if (filters.teamId !== undefined) conditions.push(eq(collectibles.teamId, filters.teamId));
  const rows = await db
    .select({
      id: pulls.id,
      serialNumber: pulls.serialNumber,
      packId: pulls.packId,
      userPackId: pulls.userPackId,
      grantId: pulls.grantId,
      createdAt: pulls.createdAt,
      collectible: publicCollectibleColumns,
      editionSize: collectibles.editionSize,
    })
    .from(pulls)
    .innerJoin(collectibles, eq(collectibles.id, pulls.collectibleId))
    .where(and(...conditions, afterCursor(pulls.createdAt, pulls.id, page.after)))
    .orderBy(desc(pulls.createdAt), desc(pulls.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

/** The user's copies among `pullIds`, with each one's collectible, team and rarity. */
export function copiesAmong(db: Database, userId: string, pullIds: readonly string[]) {
  return db
    .select({
      pullId: pulls.id,
      collectibleId: pulls.collectibleId,
      teamId: collectibles.teamId,
      rarity: collectibles.rarity,
    })
    .from(pulls)
    .innerJoin(collectibles, eq(collectibles.id, pulls.collectibleId))
    .where(and(eq(pulls.userId, userId), inArray(pulls.id, [...pullIds])));
}
