import { RARITIES, type Rarity } from '../../../schemas/enums.js';
import type { LockerRoomTotals, Pull, PullQuery } from '../../../schemas/purchases.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { pageOf } from '../pagination.js';
import { copiesAmong, listPulls, pullsByRarity, scoreOf, unopenedCount } from './repository.js';

/** What a fan owns: totals, pulls, and (through the opening service) each open's proof. */
export function createLockerRoomService(db: DatabaseHandle) {
  return {
    /**
     * The copies the user owns among `pullIds` (unknown or others' ones are left out), with each
     * one's collectible, team and rarity, read in the caller's transaction: a league's lineup.
     */
    async copiesOf(
      tx: Database,
      userId: string,
      pullIds: readonly string[],
    ): Promise<{ pullId: string; collectibleId: string; teamId: string | null; rarity: Rarity }[]> {
      if (pullIds.length === 0) return [];
      return copiesAmong(tx, userId, pullIds);
    },

    async totals(userId: string): Promise<LockerRoomTotals> {
      const [byRarity, points, unopenedPacks] = await Promise.all([
        pullsByRarity(db.orm, userId),
        scoreOf(db.orm, userId),
        unopenedCount(db.orm, userId),
      ]);
      const counts = Object.fromEntries(
        RARITIES.map((rarity) => [rarity, byRarity.get(rarity) ?? 0]),
      ) as LockerRoomTotals['byRarity'];
      return {
        pulls: Object.values(counts).reduce((sum, count) => sum + count, 0),
        byRarity: counts,
        points,
        unopenedPacks,
      };
    },

    async pulls(userId: string, query: PullQuery): Promise<{ items: Pull[]; nextCursor: string | null }> {
      const page = await listPulls(db.orm, userId, { rarity: query.rarity, teamId: query.teamId }, pageOf(query));
      return {
        items: page.items.map((row) => ({
          id: row.id,
          collectible: row.collectible,
          serialNumber: row.serialNumber,
          editionSize: row.editionSize,
          packId: row.packId,
          userPackId: row.userPackId,
          grantId: row.grantId,
          pulledAt: row.createdAt.toISOString(),
        })),
        nextCursor: page.nextCursor,
      };
    },
  };
}

export type LockerRoomService = ReturnType<typeof createLockerRoomService>;
