import { randomBytes, randomUUID } from 'node:crypto';
import type { GrantRow, RewardPromiseRow, RewardRow } from '../../../db/schema.js';
import type { Database } from '../database/index.js';
import type { EventsService } from '../events/service.js';
import { serverSeedHash } from '../packs/draw.js';
import { availableFor } from '../purchases/rules.js';
import type { PurchasesService } from '../purchases/service.js';
import type { UsersService } from '../users/service.js';
import type { WalletsService } from '../wallets/service.js';
import {
  promiseConflict,
  promiseNotFound,
  rewardExhausted,
  rewardNotFound,
  rewardPackUnavailable,
  sourceKeyConflict,
} from './errors.js';
import {
  findGrantBySource,
  findPromise,
  findReward,
  insertGrant,
  insertGrantedPacks,
  insertPromise,
  lockPackStocks,
  movePackCounts,
  updateGrant,
  updatePromise,
} from './repository.js';
import { assertStock, copiesFor, packsFor } from './rules.js';
import { allocateBlocks, lockBlock, saveBlock, writeGrantPulls } from './serials-repository.js';
import { type DrawnSerial, drawRewardSerials } from './serials.js';

/**
 * The grant engine: promises hold inventory for future grants, grants give a reward at most once
 * per source key, releases give back what a promise still holds. Everything runs in the caller's
 * transaction; an error leaves it to be rolled back (nothing of the call may be kept).
 *
 * Locks are taken in one order: the promise's row, the grant's key (its insert), the wallet (the
 * coins), the packs' rows in id order, the serial blocks and collectibles in id order, the user
 * (score). A purchase's completion takes a wallet then a pack, an open a pack then collectibles
 * then users: no two wait for each other the wrong way round.
 */

export interface GrantRequest {
  sourceKey: string;
  userId: string;
  rewardId: string;
  reason: string;
  /** Consume a grant of this promise (inventory held before) instead of taking it from supply. */
  promiseKey?: string;
  actorId?: string | null;
}

export interface PromiseRequest {
  key: string;
  rewardId: string;
  count: number;
}

const newSeed = () => {
  const serverSeed = randomBytes(32).toString('hex');
  return { serverSeed, serverSeedHash: serverSeedHash(serverSeed) };
};

/** The serial block owner of a grant made without a promise. */
const grantOwner = (grantId: string) => `grant:${grantId}`;

export function createGrantEngine(deps: {
  wallets: Pick<WalletsService, 'credit'>;
  purchases: Pick<PurchasesService, 'settleReservations'>;
  users: Pick<UsersService, 'ensureExists'>;
  events: Pick<EventsService, 'append'>;
}) {
  /** The `reward.granted` event of a grant just made, appended in its transaction. */
  const granted = (tx: Database, grant: GrantRow, teamId: string | null) =>
    deps.events.append(tx, {
      type: 'reward.granted',
      userId: grant.userId,
      teamId,
      subject: grant.id,
      data: {
        grantId: grant.id,
        rewardId: grant.rewardId,
        sourceKey: grant.sourceKey,
        coins: grant.reward.coins,
        packs: grant.reward.packs,
        collectibles: grant.reward.collectibles,
      },
    });

  /**
   * Locks the packs and throws unless each can give `needed` more packs from supply (active packs
   * only); expired reservations are reclaimed before a pack is found short.
   */
  async function takeStock(tx: Database, needs: readonly { packId: string; count: number }[]): Promise<void> {
    const stocks = await lockPackStocks(
      tx,
      needs.map((need) => need.packId),
    );
    for (const need of needs) {
      const stock = stocks.get(need.packId);
      if (!stock) throw new Error(`pack ${need.packId} of a reward vanished`);
      if (stock.status !== 'active') throw rewardPackUnavailable(need.packId, stock.status);
      // The kept count may still hold reservations past their expiry: reclaim them before deciding.
      if (availableFor(stock) < need.count)
        stock.reserved = await deps.purchases.settleReservations(tx, need.packId, stock.reserved);
      assertStock(need.packId, stock, need.count);
    }
  }

  /** The reward, or reward_not_found. */
  async function rewardOf(tx: Database, rewardId: string): Promise<RewardRow> {
    const reward = await findReward(tx, rewardId);
    if (!reward) throw rewardNotFound();
    return reward;
  }

  /** Gives each copy of the bundle's collectibles a serial of the owner's blocks, and writes the pulls. */
  async function giveCollectibles(
    tx: Database,
    grant: GrantRow,
    owner: string,
    reward: RewardRow,
  ): Promise<DrawnSerial[]> {
    const copies = copiesFor(reward.collectibles, 1);
    const drawn: DrawnSerial[] = [];
    for (const copy of copies) {
      const block = await lockBlock(tx, owner, copy.collectibleId);
      if (!block) throw new Error(`no serial block of ${copy.collectibleId} for ${owner}`);
      const result = drawRewardSerials(block, copy.collectibleId, grant.sourceKey, copy.count);
      await saveBlock(tx, owner, copy.collectibleId, result.block);
      drawn.push(...result.serials);
    }
    await writeGrantPulls(
      tx,
      { id: grant.id, userId: grant.userId, at: grant.createdAt },
      drawn.map((serial, drawIndex) => ({
        id: randomUUID(),
        collectibleId: serial.collectibleId,
        drawIndex,
        serialNumber: serial.serialNumber,
      })),
    );
    return drawn;
  }

  return {
    /**
     * Holds inventory for `count` grants of the reward under `key`: count × each pack's count
     * from the pack's supply (409 reward_stock_insufficient when it cannot), and a block of
     * count × each collectible's count of its serials. Promising a key again with the same reward
     * and count answers the promise as it is; with others, 409 reward_promise_conflict.
     */
    async promise(tx: Database, request: PromiseRequest): Promise<RewardPromiseRow> {
      if (!Number.isSafeInteger(request.count) || request.count < 1)
        throw new RangeError('a promise is for a positive number of grants');
      const existing = await findPromise(tx, request.key);
      const check = (row: RewardPromiseRow) => {
        if (row.rewardId !== request.rewardId || row.count !== request.count) throw promiseConflict(request.key);
        return row;
      };
      if (existing) return check(existing);
      const reward = await rewardOf(tx, request.rewardId);
      const now = new Date();
      if (!(await insertPromise(tx, { key: request.key, rewardId: reward.id, count: request.count, createdAt: now })))
        return check((await findPromise(tx, request.key)) as RewardPromiseRow);
      const packs = packsFor(reward.packs, request.count);
      await takeStock(tx, packs);
      await movePackCounts(
        tx,
        packs.map((need) => ({ packId: need.packId, promised: need.count, granted: 0 })),
      );
      await allocateBlocks(
        tx,
        request.key,
        copiesFor(reward.collectibles, request.count).map((copy) => ({
          collectibleId: copy.collectibleId,
          size: copy.count,
          ...newSeed(),
        })),
        now,
      );
      return (await findPromise(tx, request.key)) as RewardPromiseRow;
    },

    /**
     * Gives back what the promise holds and no grant took (its packs return to their supply); the
     * promise takes no grant after. Releasing again changes nothing; an unknown key is 404.
     */
    async release(tx: Database, key: string): Promise<RewardPromiseRow> {
      const promise = await findPromise(tx, key, { lock: true });
      if (!promise) throw promiseNotFound();
      if (promise.releasedAt !== null) return promise;
      const left = promise.count - promise.granted;
      const reward = await rewardOf(tx, promise.rewardId);
      const packs = packsFor(reward.packs, left);
      await lockPackStocks(
        tx,
        packs.map((need) => need.packId),
      );
      await movePackCounts(
        tx,
        packs.map((need) => ({ packId: need.packId, promised: -need.count, granted: 0 })),
      );
      return updatePromise(tx, key, { released: left, releasedAt: new Date() });
    },

    /**
     * Gives the reward to the user, at most once per source key: a key granted before answers that
     * grant (`created` false), whoever asks, concurrently or not. With a promise key it consumes a
     * grant of the promise (409 reward_exhausted when none is left); without, it takes its packs
     * from supply (409 reward_stock_insufficient). The coins, packs and collectibles are written
     * in the caller's transaction with the grant.
     */
    async grant(
      tx: Database,
      request: GrantRequest,
    ): Promise<{ grant: GrantRow; created: boolean; serials: DrawnSerial[] }> {
      const again = (row: GrantRow) => {
        if (row.userId !== request.userId || row.rewardId !== request.rewardId)
          throw sourceKeyConflict(request.sourceKey);
        return { grant: row, created: false, serials: [] };
      };
      let promise: RewardPromiseRow | undefined;
      if (request.promiseKey !== undefined) {
        // The promise's row first: concurrent grants of one promise take turns from here.
        promise = await findPromise(tx, request.promiseKey, { lock: true });
        if (!promise || promise.rewardId !== request.rewardId) throw promiseNotFound();
      }
      // Read after the promise's lock, so a grant that waited for it sees the key granted meanwhile.
      const existing = await findGrantBySource(tx, request.sourceKey);
      if (existing) return again(existing);
      if (promise && (promise.releasedAt !== null || promise.granted >= promise.count))
        throw rewardExhausted(promise.key);
      const reward = await rewardOf(tx, request.rewardId);
      await deps.users.ensureExists(tx, request.userId);
      const now = new Date();
      const grant = await insertGrant(tx, {
        id: randomUUID(),
        sourceKey: request.sourceKey,
        userId: request.userId,
        rewardId: reward.id,
        promiseKey: promise?.key ?? null,
        reward: { coins: reward.coins, packs: reward.packs, collectibles: reward.collectibles },
        reason: request.reason,
        actorId: request.actorId ?? null,
        createdAt: now,
      });
      // Taken by a concurrent grant of the key, which this insert waited for and which committed.
      if (!grant) return again((await findGrantBySource(tx, request.sourceKey)) as GrantRow);
      if (promise) await updatePromise(tx, promise.key, { granted: promise.granted + 1 });

      if (reward.coins > 0) {
        await deps.wallets.credit(
          tx,
          { userId: grant.userId, amount: reward.coins, kind: 'reward', reference: grant.id, reason: grant.reason },
          now,
        );
      }
      const packs = packsFor(reward.packs, 1);
      if (packs.length > 0) {
        if (promise)
          await lockPackStocks(
            tx,
            packs.map((need) => need.packId),
          );
        else await takeStock(tx, packs);
        await movePackCounts(
          tx,
          packs.map((need) => ({ packId: need.packId, promised: promise ? -need.count : 0, granted: need.count })),
        );
        await insertGrantedPacks(
          tx,
          { id: grant.id, userId: grant.userId, at: now },
          packs.flatMap((need) =>
            Array.from({ length: need.count }, () => ({ id: randomUUID(), packId: need.packId, ...newSeed() })),
          ),
        );
      }
      let serials: DrawnSerial[] = [];
      if (reward.collectibles.length > 0) {
        const owner = promise ? promise.key : grantOwner(grant.id);
        if (!promise) {
          await allocateBlocks(
            tx,
            owner,
            copiesFor(reward.collectibles, 1).map((copy) => ({
              collectibleId: copy.collectibleId,
              size: copy.count,
              ...newSeed(),
            })),
            now,
          );
        }
        serials = await giveCollectibles(tx, grant, owner, reward);
        // The proof is kept on the grant: how each serial was drawn, with the block's seed.
        const proved = await updateGrant(tx, grant.id, { proof: serials });
        await granted(tx, proved, reward.teamId);
        return { grant: proved, created: true, serials };
      }
      await granted(tx, grant, reward.teamId);
      return { grant, created: true, serials };
    },
  };
}

export type GrantEngine = ReturnType<typeof createGrantEngine>;
