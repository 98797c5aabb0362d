import { sql } from 'drizzle-orm';
import { check, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { PACK_STATUSES, RARITIES, sqlValues, TEAM_ROLES, USER_ROLES } from '../schemas/enums.js';

// Timestamps have millisecond precision (precision 3), like JavaScript dates: a keyset cursor
// carrying a timestamp then compares exactly, whoever wrote the row.

/** A subject of the identity provider, provisioned the first time a verified token shows it. */
export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    displayName: text('display_name').notNull(),
    role: text('role', { enum: USER_ROLES }).notNull().default('user'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (table) => [
    check('users_role_check', sql`${table.role} in (${sql.raw(sqlValues(USER_ROLES))})`),
    check('users_id_length_check', sql`char_length(${table.id}) between 1 and 255`),
    index('users_role_idx').on(table.role),
  ],
);

export type UserRow = typeof users.$inferSelect;

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

export const collectibles = pgTable(
  'collectibles',
  {
    id: text('id').primaryKey(),
    teamId: text('team_id').references(() => teams.id),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    imageUrl: text('image_url'),
    rarity: text('rarity', { enum: RARITIES }).notNull().default('common'),
    points: integer('points').notNull().default(0),
    /** Copies drawn so far: the last serial number given out. */
    minted: integer('minted').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (table) => [
    check('collectibles_rarity_check', sql`${table.rarity} in (${sql.raw(sqlValues(RARITIES))})`),
    check('collectibles_points_check', sql`${table.points} >= 0`),
    check('collectibles_minted_check', sql`${table.minted} >= 0`),
    index('collectibles_team_created_idx').on(table.teamId, table.createdAt.desc(), table.id.desc()),
    index('collectibles_created_idx').on(table.createdAt.desc(), table.id.desc()),
  ],
);

export const packs = pgTable(
  'packs',
  {
    id: text('id').primaryKey(),
    teamId: text('team_id').references(() => teams.id),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    imageUrl: text('image_url'),
    status: text('status', { enum: PACK_STATUSES }).notNull().default('draft'),
    price: integer('price').notNull().default(0),
    cardsPerPack: integer('cards_per_pack').notNull().default(5),
    supply: integer('supply'),
    publishedAt: timestamp('published_at', { withTimezone: true, mode: 'date', precision: 3 }),
    archivedAt: timestamp('archived_at', { withTimezone: true, mode: 'date', precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (table) => [
    check('packs_status_check', sql`${table.status} in (${sql.raw(sqlValues(PACK_STATUSES))})`),
    check('packs_price_check', sql`${table.price} >= 0`),
    check('packs_cards_per_pack_check', sql`${table.cardsPerPack} between 1 and 100`),
    check('packs_supply_check', sql`${table.supply} is null or ${table.supply} >= 1`),
    // The public list reads active packs only: partial indexes keep its cost independent of how
    // many draft and archived packs exist.
    index('packs_active_published_idx')
      .on(table.publishedAt.desc(), table.id.desc())
      .where(sql`${table.status} = 'active'`),
    index('packs_active_team_published_idx')
      .on(table.teamId, table.publishedAt.desc(), table.id.desc())
      .where(sql`${table.status} = 'active'`),
    index('packs_admin_list_idx').on(table.createdAt.desc(), table.id.desc()),
    index('packs_team_created_idx').on(table.teamId, table.createdAt.desc(), table.id.desc()),
  ],
);

/** One collectible in a pack's pool: its draw weight and the copies left to draw. */
export const packPoolEntries = pgTable(
  'pack_pool_entries',
  {
    packId: text('pack_id')
      .notNull()
      .references(() => packs.id, { onDelete: 'cascade' }),
    collectibleId: text('collectible_id')
      .notNull()
      .references(() => collectibles.id),
    weight: doublePrecision('weight').notNull().default(1),
    remaining: integer('remaining').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.packId, table.collectibleId] }),
    check('pack_pool_entries_weight_check', sql`${table.weight} > 0 and ${table.weight} <= 1000000`),
    check('pack_pool_entries_remaining_check', sql`${table.remaining} >= 0`),
    index('pack_pool_entries_collectible_idx').on(table.collectibleId),
  ],
);

/** Append-only: who changed what, when, with the state before and after. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    actorId: text('actor_id').notNull(),
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id').notNull(),
    teamId: text('team_id'),
    before: jsonb('before'),
    after: jsonb('after'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (table) => [
    index('audit_log_created_idx').on(table.createdAt.desc(), table.id.desc()),
    index('audit_log_team_created_idx').on(table.teamId, table.createdAt.desc(), table.id.desc()),
    index('audit_log_target_created_idx').on(table.targetId, table.createdAt.desc(), table.id.desc()),
  ],
);

export type TeamRow = typeof teams.$inferSelect;
export type TeamAdminRow = typeof teamAdmins.$inferSelect;
export type CollectibleRow = typeof collectibles.$inferSelect;
export type PackRow = typeof packs.$inferSelect;
export type PoolEntryRow = typeof packPoolEntries.$inferSelect;
export type AuditLogRow = typeof auditLog.$inferSelect;
