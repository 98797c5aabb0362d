import type { LeagueRow, RoundRow, RoundStandingRow } from '../../../db/schema.js';
import type { BoardInfo, RoundBoardQuery, RoundMeQuery, RoundStanding } from '../../../schemas/leaderboards.js';
import { remembered } from '../remembered.js';
import { AROUND_LIMITS, BOARD_PAGE_LIMITS } from '../../../schemas/leaderboards.js';
import type {
  League,
  LeagueListQuery,
  Lineup,
  LineupBody,
  Round,
  RoundListQuery,
} from '../../../schemas/leagues-api.js';
import type { LeagueRules } from '../../../schemas/leagues.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { ValidationError } from '../errors.js';
import type { LockerRoomService } from '../locker-room/service.js';
import { pageOf } from '../pagination.js';
import type { UsersService } from '../users/service.js';
import {
  copyInOverlappingRound,
  invalidLineup,
  leagueArchived,
  leagueNotFound,
  lineupNotFound,
  pullsNotOwned,
  roundLocked,
  roundNotFinal,
  roundNotFound,
  roundNotOpen,
} from './errors.js';
import { toLeague, toLineup, toRound, toStanding } from './mappers.js';
import {
  databaseNow,
  findLeague,
  findLineup,
  findRound,
  listLeagues,
  listRounds,
  lockFanLineups,
  lockRoundsHolding,
  overlappingUses,
  type StoredEntry,
  saveLineup,
  countUnfinishedRounds,
} from './repository.js';
import { standingOf, standingsAfter, standingsBetween } from './standings-repository.js';
import { checkLineup, notOwnedDetails } from './rules.js';

/** A row of a final round's standings, points in hundredths: what the league boards are built from. */
export interface StandingLine {
  userId: string;
  score: number;
  best: number;
  rank: number;
  position: number;
  submittedAt: Date;
}

/** What the league boards need of a round. */
export interface RoundInfo {
  roundId: string;
  leagueId: string;
  teamId: string;
  timeZone: string;
  /** The league's current season. */
  leagueSeason: string;
  /** The season the round belongs to (the league's when the round was created). */
  season: string;
  locksAt: Date;
  endsAt: Date;
  finalizedAt: Date | null;
  standingsHash: string | null;
  entrants: number | null;
}

export interface LeagueInfo {
  leagueId: string;
  teamId: string;
  timeZone: string;
  season: string;
  status: LeagueRow['status'];
}

/** The board's cursor: the last position served, base64url JSON (a position is a 32-bit integer). */
const MAX_POSITION = 2_147_483_647;
const encodeBoardCursor = (position: number) => Buffer.from(JSON.stringify({ position })).toString('base64url');

function decodeBoardCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const position = (parsed as { position?: unknown } | undefined)?.position;
  if (typeof position !== 'number' || !Number.isInteger(position) || position < 1 || position > MAX_POSITION) {
    throw new ValidationError(
      'The cursor is not valid; use the nextCursor of a previous page.',
      [{ path: '/querystring/cursor', message: 'is not a cursor this API issued' }],
      'invalid_cursor',
    );
  }
  return position;
}

const toLine = (row: RoundStandingRow): StandingLine => ({
  userId: row.userId,
  score: row.score,
  best: row.best,
  rank: row.rank,
  position: row.position,
  submittedAt: row.submittedAt,
});

/** Final rounds whose board descriptions are kept at once (past it, the memory starts over). */
const FINAL_BOARDS_KEPT = 1_000;

/** The fans' side of leagues: leagues and rounds to read, their own lineups, and final rounds' standings. */
export function createLeaguesService({
  db,
  lockerRoom,
  users,
  cacheMs,
}: {
  db: DatabaseHandle;
  lockerRoom: Pick<LockerRoomService, 'copiesOf'>;
  users: Pick<UsersService, 'displayNames'>;
  /** How long a final round's board description is reused (0: read each time). */
  cacheMs: number;
}) {
  async function leagueOrFail(tx: Database, id: string): Promise<LeagueRow> {
    const league = await findLeague(tx, id);
    if (!league) throw leagueNotFound();
    return league;
  }

  async function roundOrFail(tx: Database, leagueId: string, roundId: string): Promise<RoundRow> {
    await leagueOrFail(tx, leagueId);
    const round = await findRound(tx, roundId, { leagueId });
    if (!round) throw roundNotFound();
    return round;
  }

  /**
   * A final round's board (its league's zone, its hash), remembered for `cacheMs`: every fan's
   * rank in the round reads it, and the round no longer changes (the league's zone may).
   */
  const finalBoard = remembered(cacheMs, FINAL_BOARDS_KEPT, async (roundId): Promise<BoardInfo> => {
    const round = await findRound(db.orm, roundId);
    if (!round) throw roundNotFound();
    if (!round.finalizedAt || round.standingsHash === null || round.entrants === null) throw roundNotFinal();
    const league = await leagueOrFail(db.orm, round.leagueId);
    return {
      kind: 'round',
      id: round.id,
      // A round is its own window: it never changes once final, so its key is `all-time`.
      window: 'all-time',
      windowKey: 'all-time',
      timeZone: league.timeZone,
      final: true,
      hash: round.standingsHash,
      entrants: round.entrants,
      asOf: round.finalizedAt.toISOString(),
    };
  });

  async function withNames(rows: readonly RoundStandingRow[]): Promise<RoundStanding[]> {
    const names = await users.displayNames(rows.map((row) => row.userId));
    return rows.map((row) => toStanding(row, names.get(row.userId) ?? null));
  }

  return {
    async list(query: LeagueListQuery): Promise<{ items: League[]; nextCursor: string | null }> {
      const page = await listLeagues(db.orm, { teamId: query.teamId }, pageOf(query));
      return { items: page.items.map(toLeague), nextCursor: page.nextCursor };
    },

    async get(id: string): Promise<League> {
      return toLeague(await leagueOrFail(db.orm, id));
    },

    async rounds(leagueId: string, query: RoundListQuery): Promise<{ items: Round[]; nextCursor: string | null }> {
      await leagueOrFail(db.orm, leagueId);
      const page = await listRounds(db.orm, leagueId, pageOf(query));
      const now = new Date();
      return { items: page.items.map((row) => toRound(row, now)), nextCursor: page.nextCursor };
    },

    async round(leagueId: string, roundId: string): Promise<Round> {
      return toRound(await roundOrFail(db.orm, leagueId, roundId), new Date());
    },

    async lineup(userId: string, leagueId: string, roundId: string): Promise<Lineup> {
      await roundOrFail(db.orm, leagueId, roundId);
      const found = await findLineup(db.orm, roundId, userId);
      if (!found) throw lineupNotFound();
      return toLineup({ roundId, userId }, found.lineup, found.entries);
    },

    /**
     * Saves the fan's lineup, in one transaction: the round's row held FOR SHARE (scores and
     * finalization, which take it FOR UPDATE, wait for the edit), the fan's lineup edits
     * serialised, then the database's clock checked within [opensAt, locksAt). A save of the same
     * copies keeps submittedAt (the tie-breaker "earliest submission"); a new order of them
     * changes updatedAt only.
     */
    async saveLineup(userId: string, leagueId: string, roundId: string, body: LineupBody): Promise<Lineup> {
      return db.transaction(async (tx) => {
        const league = await leagueOrFail(tx, leagueId);
        const round = await findRound(tx, roundId, { leagueId, lock: 'share' });
        if (!round) throw roundNotFound();
        await lockFanLineups(tx, userId);
        const now = await databaseNow(tx);
        if (round.finalizedAt || now >= round.locksAt) throw roundLocked();
        if (now < round.opensAt) throw roundNotOpen();
        if (league.status !== 'active') throw leagueArchived();

        const { pullIds } = body;
        const copies = await lockerRoom.copiesOf(tx, userId, [...new Set(pullIds)]);
        const check = checkLineup({ rules: league.rules as LeagueRules, leagueTeamId: league.teamId, pullIds, copies });
        if (check.notOwned.length > 0) throw pullsNotOwned(notOwnedDetails(check.notOwned));
        if (check.invalid.length > 0) throw invalidLineup(check.invalid);
        await lockRoundsHolding(tx, pullIds, roundId);
        const uses = await overlappingUses(tx, pullIds, { roundId, locksAt: round.locksAt, endsAt: round.endsAt });
        if (uses.length > 0) {
          throw copyInOverlappingRound(
            pullIds.flatMap((pullId, position) => {
              const use = uses.find((found) => found.pullId === pullId);
              return use ? [{ path: `/pullIds/${position}`, message: `in a lineup of round ${use.roundId}` }] : [];
            }),
          );
        }

        const byPull = new Map(copies.map((copy) => [copy.pullId, copy]));
        const entries: StoredEntry[] = pullIds.map((pullId, position) => {
          const copy = byPull.get(pullId) as (typeof copies)[number];
          return { position, pullId, collectibleId: copy.collectibleId, rarity: copy.rarity };
        });
        const key = { roundId, userId };
        const existing = await findLineup(tx, roundId, userId);
        const sameOrder =
          existing !== undefined &&
          existing.entries.length === entries.length &&
          existing.entries.every((entry, index) => entry.pullId === pullIds[index]);
        if (existing && sameOrder) return toLineup(key, existing.lineup, existing.entries);
        const sameCopies =
          existing !== undefined &&
          existing.entries.length === entries.length &&
          existing.entries.every((entry) => pullIds.includes(entry.pullId));
        const times = { submittedAt: existing && sameCopies ? existing.lineup.submittedAt : now, updatedAt: now };
        await saveLineup(tx, key, entries, times);
        return toLineup(key, times, entries);
      });
    },

    /** A page of a final round's standings, by position. */
    async board(roundId: string, query: RoundBoardQuery) {
      const after = decodeBoardCursor(query.cursor);
      const limit = query.limit ?? BOARD_PAGE_LIMITS.default;
      const board = await finalBoard(roundId);
      const rows = await standingsAfter(db.orm, roundId, after, limit + 1);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        board,
        entries: await withNames(page),
        nextCursor: rows.length > limit && last ? encodeBoardCursor(last.position) : null,
      };
    },

    /** The caller's line of a final round, with up to `around` fans above and below by position. */
    async boardMe(roundId: string, userId: string, query: RoundMeQuery) {
      const around = query.around ?? AROUND_LIMITS.default;
      const board = await finalBoard(roundId);
      const mine = await standingOf(db.orm, roundId, userId);
      if (!mine) return { board, me: null, above: [], below: [] };
      const rows = await standingsBetween(db.orm, roundId, Math.max(1, mine.position - around), mine.position + around);
      const lines = await withNames(rows);
      return {
        board,
        me: lines.find((line) => line.userId === userId) ?? null,
        above: lines.filter((line) => (line.position ?? 0) < mine.position),
        below: lines.filter((line) => (line.position ?? 0) > mine.position),
      };
    },

    /**
     * Up to `limit` rows of a final round's standings after `afterPosition` (0 for the first),
     * by position, points in hundredths. Read by index (round, position): cheap at any depth.
     */
    async standingsPage(tx: Database, roundId: string, afterPosition: number, limit: number): Promise<StandingLine[]> {
      return (await standingsAfter(tx, roundId, afterPosition, limit)).map(toLine);
    },

    /** What the league boards need of a round, or undefined when there is none. */
    async roundOf(tx: Database, roundId: string): Promise<RoundInfo | undefined> {
      const round = await findRound(tx, roundId);
      if (!round) return undefined;
      const league = (await findLeague(tx, round.leagueId)) as LeagueRow;
      return {
        roundId: round.id,
        leagueId: league.id,
        teamId: league.teamId,
        timeZone: league.timeZone,
        leagueSeason: league.season,
        season: round.season,
        locksAt: round.locksAt,
        endsAt: round.endsAt,
        finalizedAt: round.finalizedAt,
        standingsHash: round.standingsHash,
        entrants: round.entrants,
      };
    },

    /** What the league boards need of a league, or undefined when there is none. */
    async leagueOf(tx: Database, leagueId: string): Promise<LeagueInfo | undefined> {
      const league = await findLeague(tx, leagueId);
      if (!league) return undefined;
      return {
        leagueId: league.id,
        teamId: league.teamId,
        timeZone: league.timeZone,
        season: league.season,
        status: league.status,
      };
    },

    /** How many of a league's rounds are not final yet: of a season, or locking within [from, to) (when a board's window can close). */
    unfinishedRounds(
      db: Database,
      leagueId: string,
      filter: { season: string } | { locksFrom: Date; locksBefore: Date },
    ): Promise<number> {
      return countUnfinishedRounds(db, leagueId, filter);
    },
  };
}

export type LeaguesService = ReturnType<typeof createLeaguesService>;
