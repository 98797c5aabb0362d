import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, primaryKey, text, unique } from 'drizzle-orm/pg-core';
import { LEAGUE_STATUSES, RARITIES, ROUND_STATUSES, sqlValues } from '../../schemas/enums.js';
import { pulls } from './economy.js';
import { grants, rewards } from './rewards.js';
import { teams } from './teams.js';
import { ts } from './timestamps.js';
import { users } from './users.js';

// Leagues: a team's fantasy competition, its rounds, the fans' lineups, the collectibles' round
// scores and each final round's frozen standings. Points are stored in hundredths (integers).

export const leagues = pgTable(
  'leagues',
  {
    id: text('id').primaryKey(),
    teamId: text('team_id')
      .notNull()
      .references(() => teams.id),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    /** LeagueRules: lineup size, eligibility, rarity caps and multipliers. */
    rules: jsonb('rules').notNull(),
    /** IANA zone the league's weeks are counted in. */
    timeZone: text('time_zone').notNull().default('UTC'),
    /** The current season's label: rounds created take it. */
    season: text('season').notNull(),
    status: text('status', { enum: LEAGUE_STATUSES }).notNull().default('active'),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [
    check('leagues_status_check', sql`${table.status} in (${sql.raw(sqlValues(LEAGUE_STATUSES))})`),
    index('leagues_list_idx').on(table.createdAt.desc(), table.id.desc()),
    index('leagues_team_list_idx').on(table.teamId, table.createdAt.desc(), table.id.desc()),
  ],
);

export const leagueRounds = pgTable(
  'league_rounds',
  {
    id: text('id').primaryKey(),
    leagueId: text('league_id')
      .notNull()
      .references(() => leagues.id),
    name: text('name').notNull(),
    season: text('season').notNull(),
    opensAt: ts('opens_at').notNull(),
    locksAt: ts('locks_at').notNull(),
    endsAt: ts('ends_at').notNull(),
    /** When the job finalizes the round by itself; null: an admin finalizes it. */
    finalizesAt: ts('finalizes_at'),
    /** PrizeBand[]: their stock is promised when set; editable while the round is upcoming. */
    prizes: jsonb('prizes').notNull().default(sql`'[]'::jsonb`),
    /** Edits of the prizes so far: the bands' promise keys carry it (plugins/app/leagues/prizes.ts). */
    prizesVersion: integer('prizes_version').notNull().default(0),
    /**
     * The status as the job last materialized it (for listings and operators); the rules go by
     * the times and finalizedAt, never by this column.
     */
    status: text('status', { enum: ROUND_STATUSES }).notNull().default('upcoming'),
    finalizedAt: ts('finalized_at'),
    standingsHash: text('standings_hash'),
    entrants: integer('entrants'),
    prizesPaidAt: ts('prizes_paid_at'),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [
    check('league_rounds_status_check', sql`${table.status} in (${sql.raw(sqlValues(ROUND_STATUSES))})`),
    check(
      'league_rounds_times_check',
      sql`${table.opensAt} < ${table.locksAt} and ${table.locksAt} < ${table.endsAt} and (${table.finalizesAt} is null or ${table.finalizesAt} >= ${table.endsAt})`,
    ),
    check(
      'league_rounds_final_check',
      sql`(${table.finalizedAt} is null) = (${table.standingsHash} is null) and (${table.finalizedAt} is null) = (${table.entrants} is null) and (${table.prizesPaidAt} is null or ${table.finalizedAt} is not null)`,
    ),
    index('league_rounds_league_idx').on(table.leagueId, table.opensAt.desc(), table.id.desc()),
    index('league_rounds_due_idx').on(table.finalizesAt).where(sql`${table.finalizedAt} is null`),
    index('league_rounds_unpaid_idx')
      .on(table.finalizedAt)
      .where(sql`${table.finalizedAt} is not null and ${table.prizesPaidAt} is null`),
    index('league_rounds_play_idx').on(table.locksAt, table.endsAt),
  ],
);

/** A fan's lineup in a round; `submittedAt` moves only when its copies change. */
export const lineups = pgTable(
  'lineups',
  {
    roundId: text('round_id')
      .notNull()
      .references(() => leagueRounds.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    submittedAt: ts('submitted_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.roundId, table.userId] })],
);

/** One copy of a lineup, with its collectible and rarity (they never change for a pull). */
export const lineupEntries = pgTable(
  'lineup_entries',
  {
    roundId: text('round_id').notNull(),
    userId: text('user_id').notNull(),
    position: integer('position').notNull(),
    pullId: text('pull_id')
      .notNull()
      .references(() => pulls.id),
    collectibleId: text('collectible_id').notNull(),
    rarity: text('rarity', { enum: RARITIES }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.roundId, table.userId, table.position] }),
    unique('lineup_entries_round_pull_unique').on(table.roundId, table.pullId),
    index('lineup_entries_pull_idx').on(table.pullId),
    check('lineup_entries_position_check', sql`${table.position} >= 0`),
  ],
);

/** A collectible's points in a round (an integer; every fielded copy earns them times its multiplier). */
export const roundScores = pgTable(
  'round_scores',
  {
    roundId: text('round_id')
      .notNull()
      .references(() => leagueRounds.id),
    collectibleId: text('collectible_id').notNull(),
    score: integer('score').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.roundId, table.collectibleId] })],
);

/** A final round's standings, frozen: what its hash is computed from, and each winner's grant. */
export const roundStandings = pgTable(
  'round_standings',
  {
    roundId: text('round_id')
      .notNull()
      .references(() => leagueRounds.id),
    userId: text('user_id').notNull(),
    position: integer('position').notNull(),
    rank: integer('rank').notNull(),
    /** Hundredths of a point (past 32 bits for big multipliers). */
    score: bigint('score', { mode: 'number' }).notNull(),
    best: bigint('best', { mode: 'number' }).notNull(),
    submittedAt: ts('submitted_at').notNull(),
    /** The prize won: its reward, its band (index in the round's prizes), and whether the band's promise pays it. */
    rewardId: text('reward_id').references(() => rewards.id),
    prizeBand: integer('prize_band'),
    promised: boolean('promised').notNull().default(false),
    grantId: text('grant_id').references(() => grants.id),
  },
  (table) => [
    primaryKey({ columns: [table.roundId, table.userId] }),
    unique('round_standings_position_unique').on(table.roundId, table.position),
    check(
      'round_standings_prize_check',
      sql`(${table.rewardId} is null) = (${table.prizeBand} is null) and (${table.grantId} is null or ${table.rewardId} is not null)`,
    ),
    index('round_standings_unpaid_idx')
      .on(table.roundId, table.position)
      .where(sql`${table.rewardId} is not null and ${table.grantId} is null`),
  ],
);

export type LeagueRow = typeof leagues.$inferSelect;
export type RoundRow = typeof leagueRounds.$inferSelect;
export type LineupRow = typeof lineups.$inferSelect;
export type LineupEntryRow = typeof lineupEntries.$inferSelect;
export type RoundStandingRow = typeof roundStandings.$inferSelect;
