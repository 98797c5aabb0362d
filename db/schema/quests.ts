import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { QUEST_PERIODS, QUEST_STATUSES, sqlValues } from '../../schemas/enums.js';
import { grants, rewards } from './rewards.js';
import { teams } from './teams.js';
import { ts } from './timestamps.js';
import { users } from './users.js';

// Quests: what fans do to earn a reward, their progress (from the event log only) and claims.

export const quests = pgTable(
  'quests',
  {
    id: text('id').primaryKey(),
    teamId: text('team_id').references(() => teams.id),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    status: text('status', { enum: QUEST_STATUSES }).notNull().default('draft'),
    /** What counts (QuestCriteria): never changed once the quest is active. */
    criteria: jsonb('criteria').notNull(),
    period: text('period', { enum: QUEST_PERIODS }).notNull().default('once'),
    /** IANA zone the periods are computed in: frozen when the quest is published. */
    timeZone: text('time_zone').notNull().default('UTC'),
    startsAt: ts('starts_at').notNull(),
    endsAt: ts('ends_at'),
    rewardId: text('reward_id')
      .notNull()
      .references(() => rewards.id),
    /** Claims the quest gives at most (all periods and fans together); null: no limit (coins-only rewards). */
    maxCompletions: integer('max_completions'),
    /** Claims made so far. */
    completions: integer('completions').notNull().default(0),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    publishedAt: ts('published_at'),
    endedAt: ts('ended_at'),
  },
  (table) => [
    check('quests_status_check', sql`${table.status} in (${sql.raw(sqlValues(QUEST_STATUSES))})`),
    check('quests_period_check', sql`${table.period} in (${sql.raw(sqlValues(QUEST_PERIODS))})`),
    check(
      'quests_completions_check',
      sql`${table.completions} >= 0 and (${table.maxCompletions} is null or (${table.maxCompletions} >= 1 and ${table.completions} <= ${table.maxCompletions}))`,
    ),
    check('quests_window_check', sql`${table.endsAt} is null or ${table.endsAt} > ${table.startsAt}`),
    index('quests_active_idx').on(table.publishedAt.desc(), table.id.desc()).where(sql`${table.status} = 'active'`),
    index('quests_admin_list_idx').on(table.createdAt.desc(), table.id.desc()),
  ],
);

/** A fan's progress on a quest in one period, and its claim. */
export const questProgress = pgTable(
  'quest_progress',
  {
    questId: text('quest_id')
      .notNull()
      .references(() => quests.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** The period's key: `once`, a local date or an ISO week in the quest's time zone. */
    period: text('period').notNull(),
    /** The criteria's own progress state (counts, the set collected, the streak). */
    state: jsonb('state').notNull(),
    progress: integer('progress').notNull().default(0),
    target: integer('target').notNull(),
    completedAt: ts('completed_at'),
    claimedAt: ts('claimed_at'),
    grantId: text('grant_id').references(() => grants.id),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.questId, table.userId, table.period] }),
    check('quest_progress_claim_check', sql`(${table.claimedAt} is null) = (${table.grantId} is null)`),
    check(
      'quest_progress_claimed_completed_check',
      sql`${table.claimedAt} is null or ${table.completedAt} is not null`,
    ),
    index('quest_progress_user_idx').on(table.userId, table.questId, table.updatedAt.desc()),
  ],
);

/** Each event counts once per quest and fan, whatever replays or retries do. */
export const questEventsCounted = pgTable(
  'quest_events_counted',
  {
    questId: text('quest_id').notNull(),
    userId: text('user_id').notNull(),
    eventId: bigint('event_id', { mode: 'number' }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.questId, table.userId, table.eventId] })],
);

export type QuestRow = typeof quests.$inferSelect;
export type QuestProgressRow = typeof questProgress.$inferSelect;
