import { sql } from 'drizzle-orm';
import { check, doublePrecision, index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { PACK_STATUSES, RARITIES, sqlValues } from '../../schemas/enums.js';
import { teams } from './teams.js';

// The catalog: collectibles, packs and the pools packs draw from.

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
    /** Copies drawn so far: serial numbers given out. */
    minted: integer('minted').notNull().default(0),
    /** Serial numbers allocated so far, to the pools of published packs: serials run 1..editionSize. */
    editionSize: integer('edition_size').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (table) => [
    check('collectibles_rarity_check', sql`${table.rarity} in (${sql.raw(sqlValues(RARITIES))})`),
    check('collectibles_points_check', sql`${table.points} >= 0`),
    check('collectibles_minted_check', sql`${table.minted} >= 0 and ${table.minted} <= ${table.editionSize}`),
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
    /** The most packs of it one user may hold reserved or bought; null: no limit. */
    maxPerUser: integer('max_per_user'),
    /** Purchases completed (owned packs), ever. */
    sold: integer('sold').notNull().default(0),
    /** Owned packs opened: sold - opened are owned and unopened. */
    opened: integer('opened').notNull().default(0),
    /**
     * Pending purchases not yet reclaimed: the live reservations, plus those past their expiry
     * that no start or job has marked expired yet (they hold nothing; see purchases/repository.ts).
     * Changed in the transaction that reserves, completes, cancels or expires.
     */
    reserved: integer('reserved').notNull().default(0),
    /** Packs held for rewards promised and not yet given (plugins/app/rewards): counted like reservations. */
    promised: integer('promised').notNull().default(0),
    /** Reward packs given (owned packs whose origin is a grant), less those a revocation took back. */
    granted: integer('granted').notNull().default(0),
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
    check('packs_max_per_user_check', sql`${table.maxPerUser} is null or ${table.maxPerUser} >= 1`),
    // Supply is never exceeded, and no pack is opened that was not sold or granted.
    check(
      'packs_sold_check',
      sql`${table.opened} >= 0 and ${table.opened} <= ${table.sold} + ${table.granted} and (${table.supply} is null or ${table.sold} + ${table.granted} <= ${table.supply})`,
    ),
    // Reservations and promises are counted, never below zero, and never past the supply with the
    // packs sold and granted.
    check(
      'packs_reserved_check',
      sql`${table.reserved} >= 0 and ${table.promised} >= 0 and ${table.granted} >= 0 and (${table.supply} is null or ${table.sold} + ${table.granted} + ${table.reserved} + ${table.promised} <= ${table.supply})`,
    ),
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

export type CollectibleRow = typeof collectibles.$inferSelect;
export type PackRow = typeof packs.$inferSelect;
export type PoolEntryRow = typeof packPoolEntries.$inferSelect;
