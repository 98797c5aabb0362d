import { randomBytes, randomUUID } from 'node:crypto';
import type { GrantRow, RewardPromiseRow, RewardRow } from '../../../db/schema.js';
import type { NewEvent } from '../../../schemas/events.js';
import type { Database } from '../database/index.js';
import { AppError } from '../errors.js';
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
  findGrantsBySource,
  findPromise,
  findReward,
  insertGrant,
  insertGrants,
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

/** The longest source key (what the API shows of a grant is bounded). */
export const MAX_SOURCE_KEY = 300;

/** A source key is a caller's bug when empty or too long: not a user's error. */
function checkSourceKey(sourceKey: string): string {
  if (sourceKey.length === 0 || sourceKey.length > MAX_SOURCE_KEY)
    throw new RangeError(`a source key has 1 to ${MAX_SOURCE_KEY} characters`);
  return sourceKey;
}

/** The serial block owner of a grant made without a promise. */
const grantOwner = (grantId: string) => `grant:${grantId}`;

export function createGrantEngine(deps: {
  wallets: Pick<WalletsService, 'applyChanges'>;
  purchases: Pick<PurchasesService, 'settleReservations'>;
  users: Pick<UsersService, 'ensureExists'>;
  events: Pick<EventsService, 'append'>;
}) {
  /** The `reward.granted` event of a grant just made. */
  const grantedEvent = (grant: GrantRow, teamId: string | null, points: number): NewEvent => ({
    type: 'reward.granted',
    userId: grant.userId,
    teamId,
    subject: grant.id,
    data: { grantId: grant.id, rewardId: grant.rewardId, sourceKey: grant.sourceKey, ...grant.reward, points },
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
  ): Promise<{ drawn: DrawnSerial[]; points: number }> {
    const copies = copiesFor(reward.collectibles, 1);
    const drawn: DrawnSerial[] = [];
    for (const copy of copies) {
      const block = await lockBlock(tx, owner, copy.collectibleId);
      if (!block) throw new Error(`no serial block of ${copy.collectibleId} for ${owner}`);
      const result = drawRewardSerials(block, copy.collectibleId, grant.sourceKey, copy.count);
      await saveBlock(tx, owner, copy.collectibleId, result.block);
      drawn.push(...result.serials);
    }
    const points = await writeGrantPulls(
      tx,
      { id: grant.id, userId: grant.userId, at: grant.createdAt },
      drawn.map((serial, drawIndex) => ({
        id: randomUUID(),
        collectibleId: serial.collectibleId,
        drawIndex,
        serialNumber: serial.serialNumber,
      })),
    );
    return { drawn, points };
  }

  /** A grant found under the request's source key: the same user and reward, or grant_source_conflict. */
  const sameGrant = (row: GrantRow, request: Pick<GrantRequest, 'sourceKey' | 'userId' | 'rewardId'>) => {
    if (row.userId !== request.userId || row.rewardId !== request.rewardId) throw sourceKeyConflict(request.sourceKey);
    return row;
  };

  const newGrant = (
    reward: RewardRow,
    request: Omit<GrantRequest, 'promiseKey'>,
    now: Date,
    promise?: RewardPromiseRow,
  ) => ({
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

  /**
   * Writes what grants just inserted give: the coins (one ledger entry each), the packs (moved
   * from the promise, or taken from supply), the collectibles (serials of the promise's blocks,
   * or of a block of each grant's own, the proof kept on the grant), and their events. Answers the
   * grants as stored.
   */
  async function give(
    tx: Database,
    reward: RewardRow,
    grants: readonly GrantRow[],
    now: Date,
    promise?: RewardPromiseRow,
  ): Promise<GrantRow[]> {
    if (grants.length === 0) return [];
    if (reward.coins > 0) {
      const credits = await deps.wallets.applyChanges(
        tx,
        grants.map((grant) => ({
          userId: grant.userId,
          amount: reward.coins,
          kind: 'reward' as const,
          reference: grant.id,
          reason: grant.reason,
          actorId: grant.actorId,
        })),
        now,
      );
      const refused = credits.find((outcome) => outcome instanceof AppError);
      if (refused) throw refused;
    }
    const packs = packsFor(reward.packs, grants.length);
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
        now,
        grants.flatMap((grant) =>
          packsFor(reward.packs, 1).flatMap((need) =>
            Array.from({ length: need.count }, () => ({
              id: randomUUID(),
              grantId: grant.id,
              userId: grant.userId,
              packId: need.packId,
              ...newSeed(),
            })),
          ),
        ),
      );
    }
    const given: GrantRow[] = [];
    const pointsOf = new Map<string, number>();
    for (const grant of grants) {
      if (reward.collectibles.length === 0) {
        given.push(grant);
        continue;
      }
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
      const { drawn, points } = await giveCollectibles(tx, grant, owner, reward);
      pointsOf.set(grant.id, points);
      // The proof is kept on the grant: how each serial was drawn, with the block's seed.
      given.push(await updateGrant(tx, grant.id, { proof: drawn }));
    }
    const events = given.map((grant) => grantedEvent(grant, reward.teamId, pointsOf.get(grant.id) ?? 0));
    await deps.events.append(tx, ...events);
    return given;
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
    async grant(tx: Database, request: GrantRequest): Promise<{ grant: GrantRow; created: boolean }> {
      checkSourceKey(request.sourceKey);
      const again = (row: GrantRow) => ({ grant: sameGrant(row, request), created: false });
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
      const grant = await insertGrant(tx, newGrant(reward, request, now, promise));
      // Taken by a concurrent grant of the key, which this insert waited for and which committed.
      if (!grant) return again((await findGrantBySource(tx, request.sourceKey)) as GrantRow);
      if (promise) await updatePromise(tx, promise.key, { granted: promise.granted + 1 });
      const [given] = await give(tx, reward, [grant], now, promise);
      return { grant: given as GrantRow, created: true };
    },

    /**
     * Grants of one reward from supply (no promise) to many users at once, each once per source
     * key, in a few statements whatever their number: the grants, the coins, the packs' counts and
     * owned packs (collectibles take a few statements per grant). The users must exist. Answers in
     * the order asked.
     */
    async grantBatch(
      tx: Database,
      rewardId: string,
      requests: readonly Omit<GrantRequest, 'rewardId' | 'promiseKey'>[],
    ): Promise<{ grant: GrantRow; created: boolean }[]> {
      const reward = await rewardOf(tx, rewardId);
      const keys = requests.map((request) => checkSourceKey(request.sourceKey));
      const found = await findGrantsBySource(tx, keys);
      const now = new Date();
      // In key order, so two batches sharing keys wait for each other's inserts the same way round.
      const fresh = requests
        .filter((request, index) => !found.has(request.sourceKey) && keys.indexOf(request.sourceKey) === index)
        .sort((a, b) => (a.sourceKey < b.sourceKey ? -1 : a.sourceKey > b.sourceKey ? 1 : 0));
      const inserted = await insertGrants(
        tx,
        fresh.map((request) => newGrant(reward, { ...request, rewardId }, now)),
      );
      const created = new Set(inserted.map((grant) => grant.sourceKey));
      // Keys a concurrent grant took meanwhile (this insert waited for it): read as they committed.
      const taken = fresh.filter((request) => !created.has(request.sourceKey)).map((request) => request.sourceKey);
      for (const [key, grant] of await findGrantsBySource(tx, taken)) found.set(key, grant);
      for (const grant of await give(tx, reward, inserted, now)) found.set(grant.sourceKey, grant);
      return requests.map((request) => {
        const grant = found.get(request.sourceKey) as GrantRow;
        const isNew = created.has(request.sourceKey) && keys.indexOf(request.sourceKey) === requests.indexOf(request);
        return { grant: isNew ? grant : sameGrant(grant, { ...request, rewardId }), created: isNew };
      });
    },
  };
}

export type GrantEngine = ReturnType<typeof createGrantEngine>;
