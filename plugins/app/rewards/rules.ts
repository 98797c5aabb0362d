import type { BundleCollectibles, BundlePacks } from '../../../db/schema.js';
import type { CreateRewardBody, RewardBundle } from '../../../schemas/rewards.js';
import { availableFor, type SalesState } from '../purchases/rules.js';
import { duplicateEntry, rewardEmpty, stockInsufficient } from './errors.js';

/** The rules of rewards and grants, as pure functions. */

/** The bundle a create body describes, with absent fields empty; refused when empty or naming an entry twice. */
export function bundleOf(body: Pick<CreateRewardBody, 'coins' | 'packs' | 'collectibles'>): RewardBundle {
  const bundle = { coins: body.coins ?? 0, packs: body.packs ?? [], collectibles: body.collectibles ?? [] };
  if (bundle.coins === 0 && bundle.packs.length === 0 && bundle.collectibles.length === 0) throw rewardEmpty();
  const seen = new Set<string>();
  for (const [index, entry] of bundle.packs.entries()) {
    if (seen.has(entry.packId)) throw duplicateEntry(`/packs/${index}/packId`, entry.packId);
    seen.add(entry.packId);
  }
  seen.clear();
  for (const [index, entry] of bundle.collectibles.entries()) {
    if (seen.has(entry.collectibleId))
      throw duplicateEntry(`/collectibles/${index}/collectibleId`, entry.collectibleId);
    seen.add(entry.collectibleId);
  }
  return bundle;
}

/** Whether a reward of `teamId` may hold an item of `itemTeamId`: a platform reward anything, a team's its own. */
export const inScope = (teamId: string | null, itemTeamId: string | null) => teamId === null || itemTeamId === teamId;

/** Packs of each kind that `grants` grants of the bundle give, in pack id order (the order rows are locked in). */
export function packsFor(packs: readonly BundlePacks[], grants: number): { packId: string; count: number }[] {
  return packs
    .map((entry) => ({ packId: entry.packId, count: entry.count * grants }))
    .sort((a, b) => (a.packId < b.packId ? -1 : a.packId > b.packId ? 1 : 0));
}

/** Copies of each collectible that `grants` grants give, in collectible id order. */
export function copiesFor(collectibles: readonly BundleCollectibles[], grants: number) {
  return collectibles
    .map((entry) => ({ collectibleId: entry.collectibleId, count: entry.count * grants }))
    .sort((a, b) => (a.collectibleId < b.collectibleId ? -1 : a.collectibleId > b.collectibleId ? 1 : 0));
}

/** Throws reward_stock_insufficient unless the pack can give `needed` more packs (sold, reserved, granted and promised ones hold theirs). */
export function assertStock(packId: string, state: Omit<SalesState, 'status' | 'maxPerUser'>, needed: number): void {
  const available = availableFor(state);
  if (available < needed) throw stockInsufficient(packId, needed, available);
}

/** What a revocation takes back of the grant's coins from a wallet holding `balance`: never below zero. */
export function coinsToTakeBack(coins: number, balance: number): { take: number; uncollected: number } {
  const take = Math.max(0, Math.min(coins, balance));
  return { take, uncollected: coins - take };
}

/** The source key of an admin grant: each user gets the reward once per key. */
export const adminSourceKey = (key: string, userId: string) => `admin:${key}:${userId}`;
