import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, unique } from 'drizzle-orm/pg-core';
import { GRANT_STATUSES, sqlValues } from '../../schemas/enums.js';
import { collectibles } from './catalog.js';
import { teams } from './teams.js';
import { ts } from './timestamps.js';
import { users } from './users.js';

// The grant engine: rewards (bundles of coins, packs and collectibles), the inventory promised to
// them, and the grants that give them, each at most once per source key.

/** One pack or collectible of a reward's bundle. */
export interface BundlePacks {
  packId: string;
  count: number;
}
export interface BundleCollectibles {
  collectibleId: string;
  count: number;
}

/** A bundle of what a reward gives; fixed once created (grants keep a snapshot of it). */
export const rewards = pgTable(
  'rewards',
  {
    id: text('id').primaryKey(),
    /** The owner: a team, or null for the platform. A team's reward holds that team's packs and collectibles only. */
    teamId: text('team_id').references(() => teams.id),
    name: text('name').notNull(),
    coins: integer('coins').notNull().default(0),
    packs: jsonb('packs').$type<BundlePacks[]>().notNull().default([]),
    collectibles: jsonb('collectibles').$type<BundleCollectibles[]>().notNull().default([]),
    createdBy: text('created_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [
    check('rewards_coins_check', sql`${table.coins} >= 0`),
    index('rewards_team_created_idx').on(table.teamId, table.createdAt.desc(), table.id.desc()),
    index('rewards_created_idx').on(table.createdAt.desc(), table.id.desc()),
  ],
);

/**
 * Inventory held for `count` future grants of a reward (a quest's winners, a league's prizes):
 * each pack of the bundle counts count × its count in the pack's `promised`. Grants consume it;
 * a release gives the rest back.
 */
export const rewardPromises = pgTable(
  'reward_promises',
  {
    key: text('key').primaryKey(),
    rewardId: text('reward_id')
      .notNull()
      .references(() => rewards.id),
    count: integer('count').notNull(),
    /** Grants made from it. */
    granted: integer('granted').notNull().default(0),
    /** Grants given back by a release (count - granted then); the promise takes no grant after. */
    released: integer('released').notNull().default(0),
    releasedAt: ts('released_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [
    check(
      'reward_promises_count_check',
      sql`${table.count} >= 1 and ${table.granted} >= 0 and ${table.released} >= 0 and ${table.granted} + ${table.released} <= ${table.count}`,
    ),
    check(
      'reward_promises_released_check',
      sql`(${table.releasedAt} is null and ${table.released} = 0) or (${table.releasedAt} is not null and ${table.granted} + ${table.released} = ${table.count})`,
    ),
    index('reward_promises_reward_idx').on(table.rewardId),
  ],
);

/**
 * A reward given to a user, at most once per `sourceKey` (why it was given: a quest period, a
 * league round, an admin's batch). Its effects (a ledger entry, owned packs, pulls) are written in
 * its transaction and name it. Revocation reverses it in place and records what it took back.
 */
export const grants = pgTable(
  'grants',
  {
    id: text('id').primaryKey(),
    sourceKey: text('source_key').notNull().unique(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    rewardId: text('reward_id')
      .notNull()
      .references(() => rewards.id),
    promiseKey: text('promise_key').references(() => rewardPromises.key),
    /** The reward's bundle as it was granted. */
    reward: jsonb('reward')
      .$type<{ coins: number; packs: BundlePacks[]; collectibles: BundleCollectibles[] }>()
      .notNull(),
    status: text('status', { enum: GRANT_STATUSES }).notNull().default('granted'),
    reason: text('reason').notNull(),
    actorId: text('actor_id'),
    /** How the collectibles' serial numbers were drawn (null without collectibles). */
    proof: jsonb('proof'),
    createdAt: ts('created_at').notNull().defaultNow(),
    revokedAt: ts('revoked_at'),
    revokedBy: text('revoked_by'),
    revokeReason: text('revoke_reason'),
    coinsTakenBack: integer('coins_taken_back').notNull().default(0),
    /** Coins a revocation could not take back: the wallet held less. */
    coinsUncollected: integer('coins_uncollected').notNull().default(0),
    /** Unopened packs a revocation took back, and opened ones it left with the user. */
    packsTakenBack: integer('packs_taken_back').notNull().default(0),
    packsKept: integer('packs_kept').notNull().default(0),
    /** Collectibles a revocation left with the user (pulls are never taken back). */
    collectiblesKept: integer('collectibles_kept').notNull().default(0),
  },
  (table) => [
    check('grants_status_check', sql`${table.status} in (${sql.raw(sqlValues(GRANT_STATUSES))})`),
    check('grants_revoked_check', sql`(${table.status} = 'revoked') = (${table.revokedAt} is not null)`),
    check(
      'grants_reversal_check',
      sql`${table.coinsTakenBack} >= 0 and ${table.coinsUncollected} >= 0 and ${table.packsTakenBack} >= 0 and ${table.packsKept} >= 0 and ${table.collectiblesKept} >= 0`,
    ),
    index('grants_user_created_idx').on(table.userId, table.createdAt.desc(), table.id.desc()),
    index('grants_reward_idx').on(table.rewardId),
    index('grants_promise_idx').on(table.promiseKey),
  ],
);

/**
 * Serial numbers of a collectible allocated to a promise (count × the bundle's count) or to one
 * admin grant: a block first .. first + size - 1 of the collectible's edition, given out one per
 * copy by the lazy shuffle of packs/draw.ts, seeded by `serverSeed` (committed to by its hash when
 * the block was allocated).
 */
export const rewardSerials = pgTable(
  'reward_serials',
  {
    /** The promise's key, or `grant:{grantId}` for a grant made without one. */
    owner: text('owner').notNull(),
    collectibleId: text('collectible_id')
      .notNull()
      .references(() => collectibles.id),
    first: integer('first').notNull(),
    size: integer('size').notNull(),
    minted: integer('minted').notNull().default(0),
    /** Places of the shuffle whose serial is not their own: place → serial. */
    moved: jsonb('moved').$type<Record<string, number>>().notNull().default({}),
    serverSeed: text('server_seed').notNull(),
    serverSeedHash: text('server_seed_hash').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [
    unique('reward_serials_owner_unique').on(table.owner, table.collectibleId),
    check(
      'reward_serials_range_check',
      sql`${table.first} >= 1 and ${table.size} >= 1 and ${table.minted} >= 0 and ${table.minted} <= ${table.size}`,
    ),
    check(
      'reward_serials_seed_check',
      sql`${table.serverSeed} ~ '^[0-9a-f]{64}$' and ${table.serverSeedHash} ~ '^[0-9a-f]{64}$'`,
    ),
  ],
);

export type RewardRow = typeof rewards.$inferSelect;
export type RewardPromiseRow = typeof rewardPromises.$inferSelect;
export type GrantRow = typeof grants.$inferSelect;
