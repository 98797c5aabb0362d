import { type Static, Type } from '@sinclair/typebox';
import { Cursor, Id, Int, Nullable, StrictObject, StringEnum, Text, Timestamp } from './common.js';

/**
 * Leaderboards: the collector board (points from pulls), each round's standings and each league's
 * season totals. Every board answers the same shapes: a page of ranked entries with what the
 * board is (its window, whether it is frozen, its hash when it is), and the caller's rank with the
 * fans around them. Ranks are competition ranks ("1224"): tied fans share a rank, and the order
 * within a tie is the board's declared tie-breaker, never storage order.
 */

export const LEADERBOARD_WINDOWS = ['all-time', 'season', 'week'] as const;
export type LeaderboardWindow = (typeof LEADERBOARD_WINDOWS)[number];
export const LeaderboardWindow = StringEnum(LEADERBOARD_WINDOWS, {
  description:
    '`all-time`; `season` (a league season: the current one unless `season` names another); `week` (an ISO week, Monday to Monday in the board’s time zone: the current one unless `week` names another)',
});

export const LEADERBOARD_KINDS = ['collectors', 'round', 'league'] as const;

/** The most entries one page answers, and the most fans above and below the caller. */
export const BOARD_PAGE_LIMITS = { default: 100, maximum: 500 } as const;
export const AROUND_LIMITS = { default: 5, maximum: 50 } as const;

/** An ISO week key, `2026-W48`. */
export const WeekKey = Text(8, {
  pattern: '^\\d{4}-W(0[1-9]|[1-4]\\d|5[0-3])$',
  description: 'An ISO week, e.g. `2026-W48`',
  examples: ['2026-W48'],
});

export const SeasonKey = Text(32, {
  minLength: 1,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
  description: 'A league season’s label, e.g. `2026` or `2026-27`',
  examples: ['2026-27'],
});

const limit = Type.Optional(
  Int({ minimum: 1, maximum: BOARD_PAGE_LIMITS.maximum, default: BOARD_PAGE_LIMITS.default }),
);
const around = Type.Optional(
  Int({
    minimum: 0,
    maximum: AROUND_LIMITS.maximum,
    default: AROUND_LIMITS.default,
    description: 'How many fans above and below the caller (fewer at the top and the bottom of the board)',
  }),
);
const windowQuery = {
  window: Type.Optional(
    StringEnum(LEADERBOARD_WINDOWS, { default: 'all-time', description: LeaderboardWindow.description }),
  ),
  season: Type.Optional(SeasonKey),
  week: Type.Optional(WeekKey),
};

/** A board with windows (collectors, a league): top N with a cursor. */
export const WindowedBoardQuery = StrictObject({ ...windowQuery, limit, cursor: Type.Optional(Cursor) });
export type WindowedBoardQuery = Static<typeof WindowedBoardQuery>;
/** The caller on a board with windows. */
export const WindowedMeQuery = StrictObject({ ...windowQuery, around });
export type WindowedMeQuery = Static<typeof WindowedMeQuery>;
/** A round's standings: one window, the round. */
export const RoundBoardQuery = StrictObject({ limit, cursor: Type.Optional(Cursor) });
export type RoundBoardQuery = Static<typeof RoundBoardQuery>;
export const RoundMeQuery = StrictObject({ around });
export type RoundMeQuery = Static<typeof RoundMeQuery>;

export const RoundBoardParams = StrictObject({ roundId: Id });
export const LeagueBoardParams = StrictObject({ leagueId: Id });

/** What every ranked entry carries. */
const rankedProperties = {
  rank: Int({ minimum: 1, description: 'Competition rank: 1 + the number of fans with a higher score' }),
  position: Nullable(
    Int({
      minimum: 1,
      description: 'Place in the board’s full order (ties broken); on frozen boards only, null on live ones',
    }),
  ),
  userId: Id,
  displayName: Nullable(Text(100)),
  score: Type.Number({ description: 'Points, with at most two decimals' }),
};

export const LeaderboardEntry = StrictObject(rankedProperties, { $id: 'LeaderboardEntry' });
export type LeaderboardEntry = Static<typeof LeaderboardEntry>;

/** A line of a round's standings: what its snapshot hash is computed from. */
export const RoundStanding = StrictObject(
  {
    ...rankedProperties,
    best: Type.Number({ description: 'The highest single copy’s weighted score (the first tie-breaker)' }),
    submittedAt: Timestamp,
    prize: Nullable(
      StrictObject({
        rewardId: Id,
        grantId: Nullable(Id),
      }),
    ),
  },
  { $id: 'RoundStanding' },
);
export type RoundStanding = Static<typeof RoundStanding>;

/** What a board is: its window, whether it is frozen, its hash when it is. */
export const BoardInfo = StrictObject(
  {
    kind: StringEnum(LEADERBOARD_KINDS),
    /** The round's or the league's id; null for the collector board. */
    id: Nullable(Id),
    window: LeaderboardWindow,
    /** The window's key: `all-time`, the season's label or the ISO week. */
    windowKey: Text(32),
    timeZone: Text(64, { description: 'The zone weeks are counted in' }),
    final: Type.Boolean({ description: 'Frozen: the window has closed and the board can no longer change' }),
    hash: Nullable(
      Text(64, {
        description:
          'SHA-256 (hex) of the frozen board’s canonical rows; null while live. How to recompute it: docs/leagues.md',
      }),
    ),
    entrants: Int({ description: 'Fans on the board' }),
    asOf: Timestamp,
  },
  { $id: 'BoardInfo' },
);
export type BoardInfo = Static<typeof BoardInfo>;

export const LeaderboardPage = StrictObject({
  success: Type.Literal(true),
  data: StrictObject({
    board: Type.Ref(BoardInfo),
    entries: Type.Array(Type.Ref(LeaderboardEntry), { maxItems: 500 }),
  }),
  nextCursor: Nullable(Text(512, { description: 'null on the last page' })),
});

export const RoundStandingsPage = StrictObject({
  success: Type.Literal(true),
  data: StrictObject({ board: Type.Ref(BoardInfo), entries: Type.Array(Type.Ref(RoundStanding), { maxItems: 500 }) }),
  nextCursor: Nullable(Text(512, { description: 'null on the last page' })),
});

export const LeaderboardMe = StrictObject({
  success: Type.Literal(true),
  data: StrictObject({
    board: Type.Ref(BoardInfo),
    me: Nullable(Type.Ref(LeaderboardEntry)),
    above: Type.Array(Type.Ref(LeaderboardEntry), { maxItems: 50, description: 'Best first' }),
    below: Type.Array(Type.Ref(LeaderboardEntry), { maxItems: 50, description: 'Best first' }),
  }),
});

export const RoundStandingsMe = StrictObject({
  success: Type.Literal(true),
  data: StrictObject({
    board: Type.Ref(BoardInfo),
    me: Nullable(Type.Ref(RoundStanding)),
    above: Type.Array(Type.Ref(RoundStanding), { maxItems: 50, description: 'Best first' }),
    below: Type.Array(Type.Ref(RoundStanding), { maxItems: 50, description: 'Best first' }),
  }),
});
