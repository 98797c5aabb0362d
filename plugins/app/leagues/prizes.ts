import type { PrizeBand } from '../../../schemas/leagues.js';
import type { Principal } from '../auth/policy.js';
import type { Database } from '../database/index.js';
import { holdsStock } from '../quests/admin.js';
import type { RewardsService } from '../rewards/service.js';
import { invalidRound, rewardNotInScope } from './errors.js';
import { bandSize, validatePrizes } from './rules.js';

/**
 * A round's prize bands and the stock they hold. A band whose reward gives packs or collectibles
 * promises them through the grant engine for `bandSize` winners; an edit of an upcoming round's
 * bands releases those promises and makes new ones under the next version's keys (a released
 * key gives nothing again).
 */

/** The key under which a round's prize band holds its stock: `round:{id}:band:{i}`, then `round:{id}:v{n}:band:{i}` after n edits. */
export const bandPromiseKey = (roundId: string, band: number, version = 0) =>
  version === 0 ? `round:${roundId}:band:${band}` : `round:${roundId}:v${version}:band:${band}`;

/** The source key of a round's prize to one fan: one grant per fan and round, whatever retries do. */
export const prizeSourceKey = (roundId: string, userId: string) => `round:${roundId}:${userId}`;

type Rewards = Pick<RewardsService, 'findReward' | 'promise' | 'release'>;

/**
 * Checks the bands (400) and their rewards: the league's team's, or the platform's for a platform
 * admin (404 reward_not_found). Answers the indexes of the bands whose reward holds stock.
 */
export async function checkPrizes(
  tx: Database,
  rewards: Pick<Rewards, 'findReward'>,
  prizes: readonly PrizeBand[],
  scope: { teamId: string; principal: Principal },
): Promise<number[]> {
  const problems = validatePrizes(prizes);
  if (problems.length > 0) throw invalidRound(problems);
  const stocked: number[] = [];
  for (const [index, band] of prizes.entries()) {
    const reward = await rewards.findReward(tx, band.rewardId);
    const inScope =
      reward !== undefined && (reward.teamId === scope.teamId || (reward.teamId === null && scope.principal.isAdmin));
    if (!reward || !inScope) throw rewardNotInScope(index);
    if (holdsStock(reward)) stocked.push(index);
  }
  return stocked;
}

/** Reserves each stocked band's reward for its size, or throws the engine's 409. */
export async function promiseBands(
  tx: Database,
  rewards: Pick<Rewards, 'promise'>,
  round: { id: string; prizesVersion: number },
  prizes: readonly PrizeBand[],
  stocked: readonly number[],
): Promise<void> {
  for (const index of stocked) {
    const band = prizes[index] as PrizeBand;
    await rewards.promise(tx, {
      key: bandPromiseKey(round.id, index, round.prizesVersion),
      rewardId: band.rewardId,
      count: bandSize(band),
    });
  }
}

/** Gives back what the round's stocked bands still hold (what no winner took). */
export async function releaseBands(
  tx: Database,
  rewards: Pick<Rewards, 'findReward' | 'release'>,
  round: { id: string; prizesVersion: number; prizes: unknown },
): Promise<void> {
  for (const [index, band] of (round.prizes as PrizeBand[]).entries()) {
    const reward = await rewards.findReward(tx, band.rewardId);
    if (reward && holdsStock(reward)) await rewards.release(tx, bandPromiseKey(round.id, index, round.prizesVersion));
  }
}
