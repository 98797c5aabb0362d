import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { sqlValues, USER_ORIGINS, USER_ROLES } from '../../schemas/enums.js';

// Users: subjects of the identity provider and our own mobile accounts.

/** A subject of the identity provider, provisioned the first time a verified token shows it. */
export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    displayName: text('display_name').notNull(),
    role: text('role', { enum: USER_ROLES }).notNull().default('user'),
    /** The points of every collectible the user pulled. */
    score: integer('score').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    /** Set when the account was deleted: the row stays (money-like records point at it), anonymized, and never signs in again. */
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date', precision: 3 }),
    /**
     * `mobile`: created by mobile sign-in, its id one of ours; an external provider's token naming
     * it is refused, so the two id spaces never meet. `external`: a subject of the provider.
     */
    origin: text('origin', { enum: USER_ORIGINS }).notNull().default('external'),
  },
  (table) => [
    check('users_origin_check', sql`${table.origin} in (${sql.raw(sqlValues(USER_ORIGINS))})`),
    check('users_role_check', sql`${table.role} in (${sql.raw(sqlValues(USER_ROLES))})`),
    check('users_id_length_check', sql`char_length(${table.id}) between 1 and 255`),
    check('users_score_check', sql`${table.score} >= 0`),
    index('users_role_idx').on(table.role),
  ],
);

export type UserRow = typeof users.$inferSelect;
