import { sql } from 'drizzle-orm';
import { check, index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { sqlValues, TEAM_ROLES } from '../../schemas/enums.js';
import { users } from './users.js';

// Teams and the users who administer them.

/** A club or brand. Packs and collectibles belong to a team, or to none (the platform's own). */
export const teams = pgTable(
  'teams',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    slug: text('slug').notNull().unique(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (table) => [
    check('teams_slug_check', sql`${table.slug} ~ '^[a-z0-9]+(-[a-z0-9]+)*$'`),
    index('teams_created_idx').on(table.createdAt.desc(), table.id.desc()),
  ],
);

/** A user's role in one team (TeamAdmin). A team always keeps at least one owner. */
export const teamAdmins = pgTable(
  'team_admins',
  {
    teamId: text('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    role: text('role', { enum: TEAM_ROLES }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    addedBy: text('added_by').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.teamId, table.userId] }),
    check('team_admins_role_check', sql`${table.role} in (${sql.raw(sqlValues(TEAM_ROLES))})`),
    index('team_admins_user_idx').on(table.userId),
  ],
);

export type TeamRow = typeof teams.$inferSelect;
export type TeamAdminRow = typeof teamAdmins.$inferSelect;
