import type { LeagueRow, RoundRow, RoundStandingRow } from '../../../db/schema.js';
import type { RoundStanding } from '../../../schemas/leaderboards.js';
import type { League, Lineup, Round } from '../../../schemas/leagues-api.js';
import type { LeagueRules, PrizeBand } from '../../../schemas/leagues.js';
import type { StoredEntry } from './repository.js';
import { pointsToApi, roundStatusAt } from './rules.js';

export function toLeague(row: LeagueRow): League {
  return {
    id: row.id,
    teamId: row.teamId,
    name: row.name,
    description: row.description,
    rules: row.rules as LeagueRules,
    timeZone: row.timeZone,
    season: row.season,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A round as the API shows it: its status computed from its times at `now`. */
export function toRound(row: RoundRow, now: Date): Round {
  return {
    id: row.id,
    leagueId: row.leagueId,
    name: row.name,
    season: row.season,
    opensAt: row.opensAt.toISOString(),
    locksAt: row.locksAt.toISOString(),
    endsAt: row.endsAt.toISOString(),
    finalizesAt: row.finalizesAt?.toISOString() ?? null,
    prizes: row.prizes as PrizeBand[],
    status: roundStatusAt(row, now),
    finalizedAt: row.finalizedAt?.toISOString() ?? null,
    standingsHash: row.standingsHash,
    entrants: row.entrants,
    prizesPaidAt: row.prizesPaidAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export function toLineup(
  key: { roundId: string; userId: string },
  times: { submittedAt: Date; updatedAt: Date },
  entries: readonly StoredEntry[],
): Lineup {
  return {
    roundId: key.roundId,
    userId: key.userId,
    pullIds: entries.map((entry) => entry.pullId),
    entries: entries.map(({ position, pullId, collectibleId, rarity }) => ({
      position,
      pullId,
      collectibleId,
      rarity,
    })),
    submittedAt: times.submittedAt.toISOString(),
    updatedAt: times.updatedAt.toISOString(),
  };
}

/** A standings row as the board serves it: points as numbers (hundredths / 100). */
export function toStanding(row: RoundStandingRow, displayName: string | null): RoundStanding {
  return {
    rank: row.rank,
    position: row.position,
    userId: row.userId,
    displayName,
    score: pointsToApi(row.score),
    best: pointsToApi(row.best),
    submittedAt: row.submittedAt.toISOString(),
    prize: row.rewardId ? { rewardId: row.rewardId, grantId: row.grantId } : null,
  };
}
