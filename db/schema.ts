import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import {
  AUDIT_TARGET_TYPES,
  CRON_JOBS,
  JOB_OUTCOMES,
  LEDGER_KINDS,
  MOBILE_PROVIDERS,
  ORDER_REVIEW_REASONS,
  ORDER_STATUSES,
  PACK_STATUSES,
  SESSION_END_REASONS,
  USER_ORIGINS,
  PURCHASE_STATUSES,
  RARITIES,
  sqlValues,
  TEAM_ROLES,
  USER_ROLES,
} from '../schemas/enums.js';

// Timestamps have millisecond precision (precision 3), like JavaScript dates: a keyset cursor
// carrying a timestamp then compares exactly, whoever wrote the row.

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
    // Supply is never exceeded, and no pack is opened that was not sold.
    check(
      'packs_sold_check',
      sql`${table.opened} >= 0 and ${table.opened} <= ${table.sold} and (${table.supply} is null or ${table.sold} <= ${table.supply})`,
    ),
    // Reservations are counted, never below zero, and never past the supply with the packs sold.
    check(
      'packs_reserved_check',
      sql`${table.reserved} >= 0 and (${table.supply} is null or ${table.sold} + ${table.reserved} <= ${table.supply})`,
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

/** Append-only: who changed what, when, with the state before and after. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    actorId: text('actor_id').notNull(),
    action: text('action').notNull(),
    targetType: text('target_type', { enum: AUDIT_TARGET_TYPES }).notNull(),
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

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/**
 * The ledger of every wallet: append-only (a trigger refuses updates and deletes). Entries of one
 * user are numbered 1, 2, 3 ...; each names the balance before it, and a foreign key ties that
 * to the previous entry's balance after, so the database itself keeps every balance equal to the
 * sum of its ledger.
 */
export const walletLedger = pgTable(
  'wallet_ledger',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    seq: integer('seq').notNull(),
    previousSeq: integer('previous_seq'),
    previousBalance: integer('previous_balance').notNull(),
    amount: integer('amount').notNull(),
    balanceAfter: integer('balance_after').notNull(),
    kind: text('kind', { enum: LEDGER_KINDS }).notNull(),
    /** What caused the entry: a purchase id, an order id ... */
    reference: text('reference'),
    reason: text('reason'),
    /** Who made an adjustment; null for the service's own entries. */
    actorId: text('actor_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [
    unique('wallet_ledger_user_seq_unique').on(table.userId, table.seq),
    unique('wallet_ledger_user_seq_balance_unique').on(table.userId, table.seq, table.balanceAfter),
    foreignKey({
      name: 'wallet_ledger_previous_fk',
      columns: [table.userId, table.previousSeq, table.previousBalance],
      foreignColumns: [table.userId, table.seq, table.balanceAfter],
    }),
    check(
      'wallet_ledger_chain_check',
      sql`(${table.seq} = 1 and ${table.previousSeq} is null and ${table.previousBalance} = 0) or (${table.seq} > 1 and ${table.previousSeq} = ${table.seq} - 1)`,
    ),
    check(
      'wallet_ledger_amount_check',
      sql`${table.amount} <> 0 and ${table.balanceAfter} = ${table.previousBalance} + ${table.amount}`,
    ),
    check('wallet_ledger_balance_check', sql`${table.balanceAfter} >= 0`),
    check('wallet_ledger_kind_check', sql`${table.kind} in (${sql.raw(sqlValues(LEDGER_KINDS))})`),
    index('wallet_ledger_user_created_idx').on(table.userId, table.createdAt.desc(), table.id.desc()),
    // One top-up per order, whatever path fulfils it: a second credit is impossible.
    uniqueIndex('wallet_ledger_topup_reference_idx').on(table.reference).where(sql`${table.kind} = 'topup'`),
  ],
);

/**
 * A user's balance: the balance after its ledger's last entry, which a foreign key names. The row
 * is also what a change of the balance locks.
 */
export const wallets = pgTable(
  'wallets',
  {
    userId: text('user_id')
      .primaryKey()
      .references(() => users.id),
    balance: integer('balance').notNull().default(0),
    lastSeq: integer('last_seq'),
    /** The last entry's time: entries of one wallet get strictly increasing times. */
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [
    foreignKey({
      name: 'wallets_last_entry_fk',
      columns: [table.userId, table.lastSeq, table.balance],
      foreignColumns: [walletLedger.userId, walletLedger.seq, walletLedger.balanceAfter],
    }),
    check(
      'wallets_balance_check',
      sql`${table.balance} >= 0 and (${table.lastSeq} is not null or ${table.balance} = 0)`,
    ),
  ],
);

/** Buying a pack: a reservation until `expiresAt`, then an owned pack once completed. */
export const purchases = pgTable(
  'purchases',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    packId: text('pack_id')
      .notNull()
      .references(() => packs.id),
    status: text('status', { enum: PURCHASE_STATUSES }).notNull().default('pending'),
    price: integer('price').notNull(),
    /** Secret until the pack is opened; its hash is published when the purchase starts. */
    serverSeed: text('server_seed').notNull(),
    serverSeedHash: text('server_seed_hash').notNull(),
    clientSeed: text('client_seed'),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    completedAt: ts('completed_at'),
    /** When it was cancelled or marked expired. */
    endedAt: ts('ended_at'),
  },
  (table) => [
    check('purchases_status_check', sql`${table.status} in (${sql.raw(sqlValues(PURCHASE_STATUSES))})`),
    check('purchases_price_check', sql`${table.price} >= 0`),
    check(
      'purchases_seed_check',
      sql`${table.serverSeed} ~ '^[0-9a-f]{64}$' and ${table.serverSeedHash} ~ '^[0-9a-f]{64}$'`,
    ),
    check('purchases_completed_check', sql`(${table.status} = 'completed') = (${table.completedAt} is not null)`),
    // Live reservations of a pack, counted by every sale.
    index('purchases_pending_pack_idx').on(table.packId, table.expiresAt).where(sql`${table.status} = 'pending'`),
    // The expiry job's scan.
    index('purchases_pending_expiry_idx').on(table.expiresAt).where(sql`${table.status} = 'pending'`),
    // A user's purchases of a pack, counted against maxPerUser.
    index('purchases_user_pack_idx')
      .on(table.userId, table.packId)
      .where(sql`${table.status} in ('pending', 'completed')`),
  ],
);

/** A pack a user owns: one per completed purchase, opened at most once. */
export const userPacks = pgTable(
  'user_packs',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    packId: text('pack_id')
      .notNull()
      .references(() => packs.id),
    purchaseId: text('purchase_id')
      .notNull()
      .unique()
      .references(() => purchases.id),
    createdAt: ts('created_at').notNull().defaultNow(),
    openedAt: ts('opened_at'),
  },
  (table) => [
    index('user_packs_unopened_idx')
      .on(table.userId, table.packId, table.createdAt, table.id)
      .where(sql`${table.openedAt} is null`),
  ],
);

/** The stored result of opening an owned pack (its primary key allows one open per pack). */
export const packOpens = pgTable('pack_opens', {
  userPackId: text('user_pack_id')
    .primaryKey()
    .references(() => userPacks.id),
  userId: text('user_id')
    .notNull()
    .references(() => users.id),
  packId: text('pack_id')
    .notNull()
    .references(() => packs.id),
  /** The response of the open, answered again for every later request about it. */
  result: jsonb('result').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

/** A drawn copy of a collectible with its serial number: unique per collectible. */
export const pulls = pgTable(
  'pulls',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    userPackId: text('user_pack_id')
      .notNull()
      .references(() => packOpens.userPackId),
    packId: text('pack_id')
      .notNull()
      .references(() => packs.id),
    collectibleId: text('collectible_id')
      .notNull()
      .references(() => collectibles.id),
    drawIndex: integer('draw_index').notNull(),
    serialNumber: integer('serial_number').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [
    unique('pulls_collectible_serial_unique').on(table.collectibleId, table.serialNumber),
    unique('pulls_user_pack_draw_unique').on(table.userPackId, table.drawIndex),
    check('pulls_serial_check', sql`${table.serialNumber} >= 1 and ${table.drawIndex} >= 0`),
    index('pulls_user_created_idx').on(table.userId, table.createdAt.desc(), table.id.desc()),
  ],
);

/**
 * The serial numbers of one pool entry: `allocated` serials in its blocks, the first `minted`
 * places of the lazy shuffle given out. Kept when the entry leaves the pool, so a collectible
 * added back draws from the serials it already had.
 */
export const serialStates = pgTable(
  'serial_states',
  {
    packId: text('pack_id')
      .notNull()
      .references(() => packs.id),
    collectibleId: text('collectible_id')
      .notNull()
      .references(() => collectibles.id),
    minted: integer('minted').notNull().default(0),
    allocated: integer('allocated').notNull().default(0),
  },
  (table) => [
    primaryKey({ columns: [table.packId, table.collectibleId] }),
    check('serial_states_count_check', sql`${table.minted} >= 0 and ${table.minted} <= ${table.allocated}`),
  ],
);

/** Serial numbers first .. first + count - 1 of a collectible, allocated to a pool entry at publish. */
export const serialBlocks = pgTable(
  'serial_blocks',
  {
    packId: text('pack_id').notNull(),
    collectibleId: text('collectible_id').notNull(),
    first: integer('first').notNull(),
    count: integer('count').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.packId, table.collectibleId, table.first] }),
    foreignKey({
      name: 'serial_blocks_state_fk',
      columns: [table.packId, table.collectibleId],
      foreignColumns: [serialStates.packId, serialStates.collectibleId],
    }),
    check('serial_blocks_range_check', sql`${table.first} >= 1 and ${table.count} >= 1`),
  ],
);

/** The places of an entry's lazy shuffle whose serial is not their own. */
export const serialMoves = pgTable(
  'serial_moves',
  {
    packId: text('pack_id').notNull(),
    collectibleId: text('collectible_id').notNull(),
    place: integer('place').notNull(),
    serialNumber: integer('serial_number').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.packId, table.collectibleId, table.place] }),
    foreignKey({
      name: 'serial_moves_state_fk',
      columns: [table.packId, table.collectibleId],
      foreignColumns: [serialStates.packId, serialStates.collectibleId],
    }),
  ],
);

/**
 * A response kept for an Idempotency-Key, per caller and route, for 24 hours. Written in the
 * transaction of the effect it answers for.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    userId: text('user_id').notNull(),
    route: text('route').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    statusCode: integer('status_code').notNull(),
    response: jsonb('response').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.userId, table.route, table.key] }),
    index('idempotency_keys_created_idx').on(table.createdAt),
  ],
);

/**
 * Who runs a job now: one run of a job at a time across every instance. A lease, not a lock held
 * by a connection: a run spans many short transactions, and a holder that died frees it when the
 * lease expires.
 */
export const jobLeases = pgTable('job_leases', {
  job: text('job', { enum: CRON_JOBS }).primaryKey(),
  runId: text('run_id').notNull(),
  expiresAt: ts('expires_at').notNull(),
});

/** Every run of a job: when, what it did, and how it ended. */
export const jobRuns = pgTable(
  'job_runs',
  {
    id: text('id').primaryKey(),
    job: text('job', { enum: CRON_JOBS }).notNull(),
    trigger: text('trigger', { enum: ['schedule', 'request'] }).notNull(),
    startedAt: ts('started_at').notNull().defaultNow(),
    finishedAt: ts('finished_at'),
    processed: integer('processed'),
    outcome: text('outcome', { enum: JOB_OUTCOMES }),
    error: text('error'),
  },
  (table) => [
    check('job_runs_job_check', sql`${table.job} in (${sql.raw(sqlValues(CRON_JOBS))})`),
    check('job_runs_outcome_check', sql`${table.outcome} in (${sql.raw(sqlValues(JOB_OUTCOMES))})`),
    check('job_runs_finished_check', sql`(${table.finishedAt} is null) = (${table.outcome} is null)`),
    index('job_runs_job_idx').on(table.job, table.startedAt),
  ],
);

/** A coin bundle fans buy with money; its prices say what it costs in each currency. */
export const products = pgTable(
  'products',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    description: text('description'),
    coins: integer('coins').notNull(),
    bonusCoins: integer('bonus_coins').notNull().default(0),
    active: boolean('active').notNull().default(true),
    sortOrder: integer('sort_order').notNull().default(0),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [
    check('products_coins_check', sql`${table.coins} > 0 and ${table.bonusCoins} >= 0`),
    index('products_listing_idx').on(table.sortOrder, table.id).where(sql`${table.active}`),
  ],
);

/**
 * What a product costs in one currency. Amount and currency never change (a new price replaces
 * an old one) and prices are never deleted: orders keep pointing at the price they were made at.
 */
export const prices = pgTable(
  'prices',
  {
    id: text('id').primaryKey(),
    productId: text('product_id')
      .notNull()
      .references(() => products.id),
    currency: text('currency').notNull(),
    unitAmount: integer('unit_amount').notNull(),
    active: boolean('active').notNull().default(true),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [
    check('prices_currency_check', sql`${table.currency} ~ '^[a-z]{3}$'`),
    check('prices_amount_check', sql`${table.unitAmount} > 0`),
    // At most one active price per product and currency.
    uniqueIndex('prices_one_active_idx').on(table.productId, table.currency).where(sql`${table.active}`),
    index('prices_product_idx').on(table.productId),
  ],
);

/**
 * An order of a coin bundle, paid through Stripe Checkout. It keeps what was sold (coins, amount,
 * currency) as it stood when made. Status only moves forward.
 */
export const orders = pgTable(
  'orders',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    productId: text('product_id')
      .notNull()
      .references(() => products.id),
    priceId: text('price_id')
      .notNull()
      .references(() => prices.id),
    coins: integer('coins').notNull(),
    amount: integer('amount').notNull(),
    currency: text('currency').notNull(),
    status: text('status', { enum: ORDER_STATUSES }).notNull().default('pending'),
    provider: text('provider', { enum: ['stripe'] })
      .notNull()
      .default('stripe'),
    /** The Checkout Session's id, once it exists. */
    providerRef: text('provider_ref').unique(),
    checkoutUrl: text('checkout_url'),
    paymentIntent: text('payment_intent'),
    failureReason: text('failure_reason'),
    /** Refunds: the charge's amount refunded so far, the coins reversed for it, and of those the ones the balance could not give back. */
    amountRefunded: integer('amount_refunded').notNull().default(0),
    coinsReversed: integer('coins_reversed').notNull().default(0),
    uncollected: integer('uncollected').notNull().default(0),
    /** An open dispute: the coins it took back, and those it could not; a dispute won returns the first. */
    disputeTaken: integer('dispute_taken').notNull().default(0),
    disputeUncollected: integer('dispute_uncollected').notNull().default(0),
    /** Paid, but something stopped it being credited as usual (a mismatch, a full wallet): a platform admin must look. */
    needsReview: boolean('needs_review').notNull().default(false),
    /** Why it was flagged for review; kept after the flag is cleared. */
    reviewReason: text('review_reason', { enum: ORDER_REVIEW_REASONS }),
    /** When a job last asked Stripe about this pending order: jobs take the least recently checked first, so none starves. */
    lastCheckedAt: ts('last_checked_at'),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    fulfilledAt: ts('fulfilled_at'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [
    check('orders_status_check', sql`${table.status} in (${sql.raw(sqlValues(ORDER_STATUSES))})`),
    check('orders_amounts_check', sql`${table.coins} > 0 and ${table.amount} > 0`),
    check(
      'orders_review_reason_check',
      sql`${table.reviewReason} is null or ${table.reviewReason} in (${sql.raw(sqlValues(ORDER_REVIEW_REASONS))})`,
    ),
    check(
      'orders_fulfilled_check',
      sql`(${table.status} in ('fulfilled', 'refunded', 'disputed')) = (${table.fulfilledAt} is not null)`,
    ),
    index('orders_user_idx').on(table.userId, table.createdAt.desc(), table.id.desc()),
    index('orders_pending_idx').on(table.expiresAt).where(sql`${table.status} = 'pending'`),
    index('orders_pending_checked_idx')
      .on(table.lastCheckedAt.asc().nullsFirst(), table.createdAt, table.id)
      .where(sql`${table.status} = 'pending'`),
    index('orders_needs_review_idx').on(table.createdAt.desc(), table.id.desc()).where(sql`${table.needsReview}`),
    index('orders_payment_intent_idx').on(table.paymentIntent),
    index('orders_uncollected_idx').on(table.createdAt).where(sql`${table.uncollected} > 0`),
    check(
      'orders_reversal_check',
      sql`${table.uncollected} >= 0 and ${table.uncollected} <= ${table.coinsReversed} and ${table.coinsReversed} <= ${table.coins}`,
    ),
  ],
);

/** Stripe events already handled, by id: committed with the event's effect, so each is handled once. */
export const stripeEvents = pgTable('stripe_events', {
  id: text('id').primaryKey(),
  type: text('type').notNull(),
  receivedAt: ts('received_at').notNull().defaultNow(),
});

export type OrderRow = typeof orders.$inferSelect;
export type ProductRow = typeof products.$inferSelect;
export type PriceRow = typeof prices.$inferSelect;

/** A provider account (Sign in with Apple, Google) linked to a user. */
export const identities = pgTable(
  'identities',
  {
    provider: text('provider', { enum: MOBILE_PROVIDERS }).notNull(),
    providerSubject: text('provider_subject').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** Profile data only: never used to find or link an account. */
    email: text('email'),
    emailVerified: boolean('email_verified'),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastSignInAt: ts('last_sign_in_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.provider, table.providerSubject] }),
    check('identities_provider_check', sql`${table.provider} in (${sql.raw(sqlValues(MOBILE_PROVIDERS))})`),
    index('identities_user_idx').on(table.userId),
  ],
);

/** A session of our own: its access tokens carry its id (`sid`); its refresh tokens rotate. */
export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    provider: text('provider', { enum: MOBILE_PROVIDERS }),
    userAgent: text('user_agent'),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastUsedAt: ts('last_used_at').notNull().defaultNow(),
    /** Slides forward with every refresh: AUTH_SESSION_TTL without use ends it. */
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    revokedReason: text('revoked_reason', { enum: SESSION_END_REASONS }),
  },
  (table) => [
    check('sessions_revoked_check', sql`(${table.revokedAt} is null) = (${table.revokedReason} is null)`),
    check('sessions_reason_check', sql`${table.revokedReason} in (${sql.raw(sqlValues(SESSION_END_REASONS))})`),
    index('sessions_user_live_idx').on(table.userId).where(sql`${table.revokedAt} is null`),
    // What every instance loads into its revoked set at start.
    index('sessions_revoked_idx').on(table.revokedAt).where(sql`${table.revokedAt} is not null`),
  ],
);

/**
 * The refresh tokens of a session, stored as SHA-256 hashes. A token redeems once: the update that
 * sets `used_at` is conditional. Its successor is kept sealed with a key derived from the token
 * itself, so a retry of the same token can be answered with the same successor, and nobody
 * holding only the database can read it.
 */
export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    createdAt: ts('created_at').notNull().defaultNow(),
    usedAt: ts('used_at'),
    successorHash: text('successor_hash'),
    successorSealed: text('successor_sealed'),
  },
  (table) => [
    check(
      'refresh_tokens_successor_check',
      sql`(${table.usedAt} is null) = (${table.successorHash} is null) and (${table.successorHash} is null) = (${table.successorSealed} is null)`,
    ),
    index('refresh_tokens_session_idx').on(table.sessionId),
  ],
);

/** External-provider tokens logged out before they expire, by `jti` or by hash. */
export const revokedTokens = pgTable(
  'revoked_tokens',
  {
    key: text('key').primaryKey(),
    userId: text('user_id').notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [index('revoked_tokens_expires_idx').on(table.expiresAt)],
);

/**
 * Provider ID tokens already used to sign in or link, until they expire: each signs in once, so a
 * token and nonce captured in transit cannot open a second session.
 */
export const idTokenUses = pgTable(
  'id_token_uses',
  {
    tokenHash: text('token_hash').primaryKey(),
    expiresAt: ts('expires_at').notNull(),
  },
  (table) => [index('id_token_uses_expires_idx').on(table.expiresAt)],
);

export type IdentityRow = typeof identities.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;

export type WalletRow = typeof wallets.$inferSelect;
export type LedgerRow = typeof walletLedger.$inferSelect;
export type PurchaseRow = typeof purchases.$inferSelect;
export type UserPackRow = typeof userPacks.$inferSelect;
export type PullRow = typeof pulls.$inferSelect;

export type TeamRow = typeof teams.$inferSelect;
export type TeamAdminRow = typeof teamAdmins.$inferSelect;
export type CollectibleRow = typeof collectibles.$inferSelect;
export type PackRow = typeof packs.$inferSelect;
export type PoolEntryRow = typeof packPoolEntries.$inferSelect;
export type AuditLogRow = typeof auditLog.$inferSelect;
