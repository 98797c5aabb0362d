import type { FastifyBaseLogger } from 'fastify';
import type { LeagueRow, RoundRow } from '../../../db/schema.js';
import type { Rarity } from '../../../schemas/enums.js';
import type { Round } from '../../../schemas/leagues-api.js';
import type { LeagueRules, PrizeBand } from '../../../schemas/leagues.js';
import type { AuditService } from '../audit/service.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import type { EventsService } from '../events/service.js';
import { holdsStock } from '../quests/admin.js';
import type { RewardsService } from '../rewards/service.js';
import { bandPromiseKey, prizeSourceKey, releaseBands } from './prizes.js';
import { roundNotFound, roundNotLocked } from './errors.js';
import { toRound } from './mappers.js';
import {
  databaseNow,
  dueRounds,
  findLeague,
  findRound,
  lineupCopies,
  materializeStatuses,
  scoresOf,
  unpaidRounds,
  updateRound,
} from './repository.js';
import {
  hasUnpaidWinner,
  insertStandings,
  type NewStanding,
  setStandingGrant,
  unpaidWinners,
} from './standings-repository.js';
import { bandSize, lineupScore, multipliersInHundredths, rankStandings, standingsHash, winners } from './rules.js';

/** Prizes paid per transaction: a round of many winners never holds its lock for long. */
export const PRIZE_BATCH = 200;

/** The actor of what the job does, in the audit log. */
export const JOB_ACTOR = 'system:advance-rounds';

export interface FinalizerDeps {
  db: DatabaseHandle;
  audit: Pick<AuditService, 'record'>;
  events: Pick<EventsService, 'append'>;
  rewards: Pick<RewardsService, 'findReward' | 'grant' | 'release'>;
  log?: FastifyBaseLogger;
}

/**
 * Finalization in two phases. Phase 1 (one transaction, the round's row FOR UPDATE): score
 * every lineup, rank them, freeze the standings with their hash, append `round.finalized`.
 * Phase 2 (resumable, PRIZE_BATCH winners per transaction): grant each winner's prize once
 * (source key round:{roundId}:{userId}), then release what the bands' promises still hold and
 * mark the prizes paid. Either phase may be cut short by a crash: the next call (or the job)
 * does what is missing, and no fan is paid twice.
 */
export function createRoundFinalizer({ db, audit, events, rewards, log }: FinalizerDeps) {
  /** Phase 1: answers whether this call froze the standings (false when the round was final already). */
  async function rank(roundId: string, actorId: string): Promise<boolean> {
    return db.transaction(async (tx) => {
      const round = await findRound(tx, roundId, { lock: 'update' });
      if (!round) throw roundNotFound();
      if (round.finalizedAt) return false;
      const now = await databaseNow(tx);
      if (now < round.locksAt) throw roundNotLocked();
      const league = (await findLeague(tx, round.leagueId)) as LeagueRow;
      const multipliers = multipliersInHundredths(league.rules as LeagueRules);
      const scores = new Map((await scoresOf(tx, roundId)).map((row) => [row.collectibleId, row.score]));

      const lineups = new Map<string, { submittedAt: Date; copies: { collectibleId: string; rarity: Rarity }[] }>();
      for (const row of await lineupCopies(tx, roundId)) {
        let lineup = lineups.get(row.userId);
        if (!lineup) {
          lineup = { submittedAt: row.submittedAt, copies: [] };
          lineups.set(row.userId, lineup);
        }
        if (row.collectibleId !== null && row.rarity !== null)
          lineup.copies.push({ collectibleId: row.collectibleId, rarity: row.rarity });
      }
      const standings = rankStandings(
        [...lineups].map(([userId, lineup]) => ({
          userId,
          submittedAt: lineup.submittedAt,
          ...lineupScore(lineup.copies, scores, multipliers),
        })),
      );

      // Within a band, the first bandSize winners by position take its promise; winners tied
      // past its size are paid from supply.
      const bands = round.prizes as PrizeBand[];
      const won = new Map(winners(standings, bands).map((winner) => [winner.userId, winner.band]));
      const taken = new Map<number, number>();
      const rows: NewStanding[] = standings.map((standing) => {
        const band = won.get(standing.userId);
        const base = {
          roundId,
          userId: standing.userId,
          position: standing.position,
          rank: standing.rank,
          score: standing.score,
          best: standing.best,
          submittedAt: standing.submittedAt,
        };
        if (!band) return { ...base, rewardId: null, prizeBand: null, promised: false };
        const index = bands.indexOf(band);
        const count = (taken.get(index) ?? 0) + 1;
        taken.set(index, count);
        return { ...base, rewardId: band.rewardId, prizeBand: index, promised: count <= bandSize(band) };
      });
      await insertStandings(tx, rows);

      const hash = standingsHash(standings);
      const finalized = await updateRound(tx, roundId, {
        finalizedAt: now,
        status: 'final',
        standingsHash: hash,
        entrants: standings.length,
        updatedAt: now,
      });
      await events.append(tx, {
        type: 'round.finalized',
        teamId: league.teamId,
        subject: roundId,
        data: { leagueId: league.id, roundId, season: round.season, standingsHash: hash, entrants: standings.length },
      });
      await audit.record(
        tx,
        {
          actorId,
          action: 'round.finalize',
          targetType: 'round',
          targetId: roundId,
          teamId: league.teamId,
          before: toRound(round, now),
          after: toRound(finalized, now),
        },
        now,
      );
      return true;
    });
  }

  /**
   * Phase 2: pays the winners not yet paid, PRIZE_BATCH per transaction, each grant in a
   * savepoint so one that fails (a pack sold out for a winner paid from supply) leaves the
   * others paid. When every winner is paid, the bands' promises release what they still hold
   * and prizesPaidAt is set. A grant that failed is rethrown at the end: the round stays final
   * and unpaid, and the next call (or the job) tries that winner again.
   */
  async function payPrizes(roundId: string): Promise<void> {
    let after = 0;
    let failure: unknown;
    for (;;) {
      const next = await db.transaction(async (tx) => {
        const round = await findRound(tx, roundId, { lock: 'update' });
        if (!round?.finalizedAt || round.prizesPaidAt) return undefined;
        const league = (await findLeague(tx, round.leagueId)) as LeagueRow;
        const batch = await unpaidWinners(tx, roundId, after, PRIZE_BATCH);
        for (const standing of batch) {
          try {
            await tx.transaction(async (savepoint) => {
              const reward = await rewards.findReward(savepoint, standing.rewardId as string);
              const promised = standing.promised && reward !== undefined && holdsStock(reward);
              const { grant } = await rewards.grant(savepoint as Database, {
                sourceKey: prizeSourceKey(roundId, standing.userId),
                userId: standing.userId,
                rewardId: standing.rewardId as string,
                reason: `league ${league.name}, round ${round.name}: rank ${standing.rank}`,
                ...(promised
                  ? { promiseKey: bandPromiseKey(roundId, standing.prizeBand as number, round.prizesVersion) }
                  : {}),
              });
              await setStandingGrant(savepoint as Database, roundId, standing.userId, grant.id);
            });
          } catch (error) {
            failure ??= error;
            log?.warn(
              { err: error, roundId, userId: standing.userId },
              'a round prize could not be granted; finalize again',
            );
          }
        }
        const last = batch[batch.length - 1];
        if (batch.length === PRIZE_BATCH && last) return last.position;
        if (failure !== undefined || (await hasUnpaidWinner(tx, roundId))) return undefined;
        await releaseBands(tx, rewards, round);
        const now = await databaseNow(tx);
        await updateRound(tx, roundId, { prizesPaidAt: now, updatedAt: now });
        return undefined;
      });
      if (next === undefined) break;
      after = next;
    }
    if (failure !== undefined) throw failure;
  }

  /** Phase 1 when needed, then phase 2: safe to call again, concurrently, or after a crash. */
  async function finalize(roundId: string, actorId: string): Promise<Round> {
    await rank(roundId, actorId);
    await payPrizes(roundId);
    const round = (await findRound(db.orm, roundId)) as RoundRow;
    return toRound(round, new Date());
  }

  return {
    finalize,
    /** Phase 1 alone (tests and operators: the standings frozen, no prize paid yet). */
    rank,
    payPrizes,

    /**
     * The job: records statuses, finalizes up to `limit` rounds past their finalizesAt, and
     * resumes up to `limit` final rounds whose prizes are unpaid. A round that fails is logged
     * and retried by the next run. Answers how many rounds it finalized or resumed.
     */
    async advance(limit: number): Promise<number> {
      await materializeStatuses(db.orm);
      let processed = 0;
      for (const id of await dueRounds(db.orm, limit)) {
        try {
          await finalize(id, JOB_ACTOR);
          processed++;
        } catch (error) {
          log?.warn({ err: error, roundId: id }, 'a round could not be finalized; the next run retries');
        }
      }
      for (const id of await unpaidRounds(db.orm, limit)) {
        try {
          await payPrizes(id);
          processed++;
        } catch (error) {
          log?.warn({ err: error, roundId: id }, 'a round’s prizes could not all be paid; the next run retries');
        }
      }
      return processed;
    },
  };
}

export type RoundFinalizer = ReturnType<typeof createRoundFinalizer>;
