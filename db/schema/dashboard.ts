import { sql } from 'drizzle-orm';
import { bigint, check, index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { ts } from './timestamps.js';

// The dashboard's rollups of the event log (plugins/app/dashboard): sums per team and UTC hour,
// so the days of any time zone are sums of whole hours, and what each event added is keyed by
// the event's id.

/** A rollup count: bigint, read as a JavaScript number (a count of events stays far below 2^53). */
const count = (name: string) => bigint(name, { mode: 'number' }).notNull().default(0);

/**
 * One row per (team, UTC hour, pack): what the team's events of that hour added. `teamId` is ''
 * for packs and events of no team (the platform's own); `packId` is '' for figures of no pack
 * (quest completions, grants, league entries).
 */
export const dashboardHours = pgTable(
  'dashboard_hours',
  {
    teamId: text('team_id').notNull(),
    hour: ts('hour').notNull(),
    packId: text('pack_id').notNull(),
    packsSold: count('packs_sold'),
    coinsTaken: count('coins_taken'),
    packsOpened: count('packs_opened'),
    pullsCommon: count('pulls_common'),
    pullsUncommon: count('pulls_uncommon'),
    pullsRare: count('pulls_rare'),
    pullsEpic: count('pulls_epic'),
    pullsLegendary: count('pulls_legendary'),
    questCompletions: count('quest_completions'),
    grants: count('grants'),
    leagueEntries: count('league_entries'),
  },
  (table) => [
    primaryKey({ columns: [table.teamId, table.hour, table.packId] }),
    // A team's rows of one pack (or its hours' total rows) over a range, read in one run of the
    // index: the primary key's order would step through every pack of each hour.
    index('dashboard_hours_team_pack_idx').on(table.teamId, table.packId, table.hour),
    check('dashboard_hours_hour_check', sql`extract(epoch from ${table.hour}) % 3600 = 0`),
  ],
);

/**
 * Each fan who bought a team's packs, with the UTC hours of their purchases, sorted: the unique
 * buyers of a range are the fans with an hour in it, found by two binary searches (width_bucket)
 * per fan, so a year's count reads one row per fan, not one per purchase.
 */
export const dashboardFanHours = pgTable(
  'dashboard_fan_hours',
  {
    teamId: text('team_id').notNull(),
    userId: text('user_id').notNull(),
    hours: ts('hours').array().notNull(),
  },
  (table) => [primaryKey({ columns: [table.teamId, table.userId] })],
);

/** Every copy drawn from a pack, per collectible, over the pack's whole life: the fairness check's observations. */
export const dashboardPackDraws = pgTable(
  'dashboard_pack_draws',
  {
    packId: text('pack_id').notNull(),
    collectibleId: text('collectible_id').notNull(),
    teamId: text('team_id').notNull(),
    draws: count('draws'),
  },
  (table) => [
    primaryKey({ columns: [table.packId, table.collectibleId] }),
    index('dashboard_pack_draws_team_idx').on(table.teamId),
  ],
);

/** The events the rollups include, by id: an event is added once, however often it is read. */
export const dashboardCounted = pgTable('dashboard_counted', {
  eventId: bigint('event_id', { mode: 'number' }).primaryKey(),
});
