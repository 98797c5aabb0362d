import { randomBytes, randomUUID } from 'node:crypto';
import type { OpenPackBody, OpenResult } from '../../../schemas/purchases.js';
import type { Database } from '../db.js';
import { NotFoundError } from '../errors.js';
import { drawPack, drawPositions, type SerialState } from '../packs/draw.js';
import { findPack, type PoolRow, poolOf } from '../packs/repository.js';
import { activeBlocks, movesChanged, placesRead } from '../packs/serials.js';
import { allocateSerials, loadMoves, saveSerialChanges } from '../packs/serials-repository.js';
import { findUserPack, oldestUnopened } from '../purchases/repository.js';
import { packNotFound } from '../purchases/service.js';
import { addScore, countMinted, findOpenResult, purchaseSeeds, recordOpen, takeCopies } from './repository.js';

const userPackNotFound = () => new NotFoundError('user_pack_not_found', 'You own no pack with this id of this kind.');
const noUnopenedPack = () => new NotFoundError('no_unopened_pack', 'You have no unopened pack of this kind.');
const openNotFound = () => new NotFoundError('open_not_found', 'You have opened no pack with this id.');

/** How often an open without userPackId looks again when the pack it chose was opened meanwhile. */
const MAX_PICKS = 5;

/**
 * Opening owned packs: the verifiable draw (packs/draw.ts) applied to the pool, serials, points
 * and the stored result, in the caller's transaction. The pack's row lock serializes every open
 * of one pack with its sales and admin changes; an owned pack's row lock makes opening it twice
 * answer the first result.
 */
export function createOpeningService() {
  /** The caller's owned pack to open, locked: the one named, or the oldest unopened one. */
  async function pickUserPack(tx: Database, userId: string, packId: string, userPackId: string | undefined) {
    if (userPackId !== undefined) {
      const owned = await findUserPack(tx, { id: userPackId, userId }, { lock: true });
      if (!owned || owned.packId !== packId) throw userPackNotFound();
      return owned;
    }
    for (let pick = 0; pick < MAX_PICKS; pick++) {
      const candidate = await oldestUnopened(tx, userId, packId);
      if (candidate === undefined) throw noUnopenedPack();
      const owned = await findUserPack(tx, { id: candidate, userId }, { lock: true });
      if (owned && owned.openedAt === null) return owned;
    }
    throw noUnopenedPack();
  }

  return {
    async open(tx: Database, userId: string, packId: string, body: OpenPackBody): Promise<OpenResult> {
      const owned = await pickUserPack(tx, userId, packId, body.userPackId);
      if (owned.openedAt !== null) {
        const stored = await findOpenResult(tx, { userPackId: owned.id, userId });
        if (!stored) throw new Error(`opened pack ${owned.id} has no stored result`);
        return stored;
      }
      const seeds = await purchaseSeeds(tx, owned.purchaseId);
      if (!seeds) throw new Error(`owned pack ${owned.id} has no purchase`);
      const pack = await findPack(tx, packId, { lock: true });
      if (!pack) throw packNotFound();
      const pool = await poolOf(tx, packId);
      const clientSeed = body.clientSeed ?? seeds.clientSeed ?? randomBytes(16).toString('hex');
      const now = new Date();

      // Which entries the draws take and where: only their serial places are read.
      const { positions } = drawPositions(seeds.serverSeed, clientSeed, pack.cardsPerPack, pool);
      const byId = new Map(pool.map((entry) => [entry.collectibleId, entry]));
      const drawnIds = [...new Set(positions.map((drawn) => drawn.collectibleId))];
      const stored = await allocateSerials(tx, packId, drawnIds.map((id) => byId.get(id) as PoolRow), now);
      const minted = new Map(drawnIds.map((id) => [id, stored.get(id)?.minted ?? 0]));
      const moves = await loadMoves(tx, packId, placesRead(positions, minted));
      const serials = new Map<string, SerialState>(
        drawnIds.map((id) => {
          const entry = stored.get(id);
          if (!entry) throw new Error(`no serial state for ${id} in pack ${packId}`);
          const length = entry.minted + (byId.get(id) as PoolRow).remaining;
          return [id, { blocks: activeBlocks(entry.blocks, length), minted: entry.minted, moved: moves.get(id) ?? new Map() }];
        }),
      );
      const drawn = drawPack({ serverSeed: seeds.serverSeed, clientSeed, cardsPerPack: pack.cardsPerPack, pool, serials });

      // Writes, collectibles in one order (two opens sharing collectibles lock them the same way round).
      const editionSizes = new Map<string, number>();
      for (const id of [...drawnIds].sort()) {
        const count = drawn.draws.filter((draw) => draw.collectibleId === id).length;
        const before = serials.get(id) as SerialState;
        const after = drawn.serialsAfter.get(id) as SerialState;
        await takeCopies(tx, packId, id, count);
        await saveSerialChanges(tx, packId, id, { minted: count, ...movesChanged(before.moved, after.moved) });
        editionSizes.set(id, await countMinted(tx, id, count));
      }
      await addScore(tx, userId, drawn.draws.reduce((sum, draw) => sum + (byId.get(draw.collectibleId) as PoolRow).collectible.points, 0));
      const result: OpenResult = {
        userPackId: owned.id,
        packId,
        openedAt: now.toISOString(),
        items: drawn.draws.map((draw) => ({
          id: randomUUID(),
          collectible: (byId.get(draw.collectibleId) as PoolRow).collectible,
          serialNumber: draw.serialNumber,
          editionSize: editionSizes.get(draw.collectibleId) as number,
        })),
        fairness: { serverSeed: seeds.serverSeed, serverSeedHash: seeds.serverSeedHash, clientSeed, pool: drawn.pool, draws: drawn.draws },
      };
      await recordOpen(tx, { userPackId: owned.id, userId, packId, result, openedAt: now });
      return result;
    },

    /** A stored open result, for its owner only. */
    async openResult(db: Database, userId: string, userPackId: string): Promise<OpenResult> {
      const stored = await findOpenResult(db, { userPackId, userId });
      if (!stored) throw openNotFound();
      return stored;
    },
  };
}

export type OpeningService = ReturnType<typeof createOpeningService>;
