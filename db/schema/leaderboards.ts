import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, primaryKey, smallint, text, unique } from 'drizzle-orm/pg-core';
import { ts } from './timestamps.js';

// Leaderboards with windows (the collector board, each league's totals): live entries kept by a
// consumer of the event log, a rank structure that answers "how many fans are above this score"
// without counting them, and the frozen rows of windows that have closed.

/**
 * One board: a kind, what it is about and a window (`collectors:all-time`,
 * `collectors:week:2026-W48`, `league:{id}:season:2026-27` ...). Frozen once its window has
 * closed: its rows are then read from leaderboard_frozen_rows, and `hash` is theirs.
 */
export const leaderboards = pgTable(
  'leaderboards',
  {
    key: text('key').primaryKey(),
    kind: text('kind').notNull(),
    /** The league's id; null for the collector board. */
    subjectId: text('subject_id'),
    window: text('window').notNull(),
    windowKey: text('window_key').notNull(),
    timeZone: text('time_zone').notNull(),
    entrants: integer('entrants').notNull().default(0),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    frozenAt: ts('frozen_at'),
    /** SHA-256 (hex) of the frozen rows' canonical lines. */
    hash: text('hash'),
  },
  (table) => [
    check('leaderboards_frozen_check', sql`(${table.frozenAt} is null) = (${table.hash} is null)`),
    check('leaderboards_entrants_check', sql`${table.entrants} >= 0`),
    index('leaderboards_open_idx').on(table.kind, table.window).where(sql`${table.frozenAt} is null`),
  ],
);

/**
 * A fan's score on a live board, in hundredths of a point. `orderKey` (the negated score) lets
 * one ascending index serve the board's order (score desc, reachedAt asc, userId asc) and keyset
 * reads on either side of a fan.
 */
export const leaderboardEntries = pgTable(
  'leaderboard_entries',
  {
    board: text('board').notNull(),
    userId: text('user_id').notNull(),
    score: bigint('score', { mode: 'number' }).notNull(),
    orderKey: bigint('order_key', { mode: 'number' }).notNull().generatedAlwaysAs(sql`- score`),
    /** When the score last rose: the first to reach a score goes first among those tied on it. */
    reachedAt: ts('reached_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.board, table.userId] }),
    index('leaderboard_entries_order_idx').on(table.board, table.orderKey, table.reachedAt, table.userId),
  ],
);

/**
 * How many fans of a board hold each score, at six levels: level 0 counts each score, level k
 * each run of 256^k scores. The fans above a score are the sum of at most 255 buckets per level
 * (leaderboard_fans_above), whatever the size of the board.
 */
export const leaderboardCounts = pgTable(
  'leaderboard_counts',
  {
    board: text('board').notNull(),
    level: smallint('level').notNull(),
    bucket: bigint('bucket', { mode: 'number' }).notNull(),
    fans: integer('fans').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.board, table.level, table.bucket] }),
    check('leaderboard_counts_fans_check', sql`${table.fans} >= 0`),
    check('leaderboard_counts_level_check', sql`${table.level} between 0 and 5`),
  ],
);

/** The rows of a frozen board, ranked once when its window closed. */
export const leaderboardFrozenRows = pgTable(
  'leaderboard_frozen_rows',
  {
    board: text('board').notNull(),
    position: integer('position').notNull(),
    rank: integer('rank').notNull(),
    userId: text('user_id').notNull(),
    score: bigint('score', { mode: 'number' }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.board, table.position] }),
    unique('leaderboard_frozen_rows_user_unique').on(table.board, table.userId),
    check('leaderboard_frozen_rows_rank_check', sql`${table.rank} >= 1 and ${table.rank} <= ${table.position}`),
  ],
);

export type LeaderboardRow = typeof leaderboards.$inferSelect;
