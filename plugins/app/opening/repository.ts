import { and, eq, sql } from 'drizzle-orm';
import { collectibles, packOpens, packPoolEntries, packs, pulls, purchases, userPacks, users } from '../../../db/schema.js';
import type { OpenResult } from '../../../schemas/purchases.js';
import type { Database } from '../db.js';

/** SQL of opening owned packs. Writes run inside the caller's transaction. */

export async function findOpenResult(db: Database, key: { userPackId: string; userId: string }): Promise<OpenResult | undefined> {
  const [row] = await db
    .select({ result: packOpens.result })
    .from(packOpens)
    .where(and(eq(packOpens.userPackId, key.userPackId), eq(packOpens.userId, key.userId)));
  return row?.result as OpenResult | undefined;
}

export async function purchaseSeeds(db: Database, purchaseId: string) {
  const [row] = await db
    .select({ serverSeed: purchases.serverSeed, serverSeedHash: purchases.serverSeedHash, clientSeed: purchases.clientSeed })
    .from(purchases)
    .where(eq(purchases.id, purchaseId));
  return row;
}

/** Takes `count` copies of an entry out of the pool. */
export async function takeCopies(tx: Database, packId: string, collectibleId: string, count: number): Promise<void> {
  await tx
    .update(packPoolEntries)
    .set({ remaining: sql`${packPoolEntries.remaining} - ${count}` })
    .where(and(eq(packPoolEntries.packId, packId), eq(packPoolEntries.collectibleId, collectibleId)));
}

/** Counts `count` more minted copies of a collectible; answers its editionSize. */
export async function countMinted(tx: Database, collectibleId: string, count: number): Promise<number> {
  const [row] = await tx
    .update(collectibles)
    .set({ minted: sql`${collectibles.minted} + ${count}` })
    .where(eq(collectibles.id, collectibleId))
    .returning({ editionSize: collectibles.editionSize });
  return row?.editionSize ?? 0;
}

export async function addScore(tx: Database, userId: string, points: number): Promise<void> {
  if (points === 0) return;
  await tx.update(users).set({ score: sql`${users.score} + ${points}` }).where(eq(users.id, userId));
}

/** Stores the open: its result, its pulls, the owned pack marked opened and the pack's count. */
export async function recordOpen(
  tx: Database,
  open: { userPackId: string; userId: string; packId: string; result: OpenResult; openedAt: Date },
): Promise<void> {
  await tx.insert(packOpens).values({ userPackId: open.userPackId, userId: open.userId, packId: open.packId, result: open.result, createdAt: open.openedAt });
  await tx.insert(pulls).values(
    open.result.items.map((item, drawIndex) => ({
      id: item.id,
      userId: open.userId,
      userPackId: open.userPackId,
      packId: open.packId,
      collectibleId: item.collectible.id,
      drawIndex,
      serialNumber: item.serialNumber,
      createdAt: open.openedAt,
    })),
  );
  await tx.update(userPacks).set({ openedAt: open.openedAt }).where(eq(userPacks.id, open.userPackId));
  await tx.update(packs).set({ opened: sql`${packs.opened} + 1` }).where(eq(packs.id, open.packId));
}
