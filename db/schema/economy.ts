import { sql } from 'drizzle-orm';
import {
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { LEDGER_KINDS, PURCHASE_STATUSES, sqlValues } from '../../schemas/enums.js';
import { collectibles, packs } from './catalog.js';
import { grants } from './rewards.js';
import { ts } from './timestamps.js';
import { users } from './users.js';

// Coins and what they buy: wallets and their ledger, purchases, owned packs, opens, pulls and
// the serial numbers pulls carry.

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

/**
 * A pack a user owns, opened at most once: one per completed purchase, or given by a grant of the
 * reward engine (which commits to its own server seed, so its open is as verifiable as a bought
 * one's). A revocation takes back an unopened granted pack by marking it revoked, never deleting it.
 */
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
      .unique()
      .references(() => purchases.id),
    grantId: text('grant_id').references(() => grants.id),
    /** A granted pack's seed (a bought pack's is its purchase's): secret until it is opened. */
    serverSeed: text('server_seed'),
    serverSeedHash: text('server_seed_hash'),
    createdAt: ts('created_at').notNull().defaultNow(),
    openedAt: ts('opened_at'),
    /** When a revocation took the (unopened, granted) pack back. */
    revokedAt: ts('revoked_at'),
  },
  (table) => [
    index('user_packs_unopened_idx')
      .on(table.userId, table.packId, table.createdAt, table.id)
      .where(sql`${table.openedAt} is null and ${table.revokedAt} is null`),
    index('user_packs_grant_idx').on(table.grantId),
    // Exactly one origin: a purchase (whose seeds it uses), or a grant with seeds of its own.
    check(
      'user_packs_origin_check',
      sql`(${table.purchaseId} is not null and ${table.grantId} is null and ${table.serverSeed} is null and ${table.serverSeedHash} is null)
        or (${table.purchaseId} is null and ${table.grantId} is not null and ${table.serverSeed} ~ '^[0-9a-f]{64}$' and ${table.serverSeedHash} ~ '^[0-9a-f]{64}$')`,
    ),
    check(
      'user_packs_revoked_check',
      sql`${table.revokedAt} is null or (${table.grantId} is not null and ${table.openedAt} is null)`,
    ),
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
    /** The open that drew it; null for a copy given by a grant. */
    userPackId: text('user_pack_id').references(() => packOpens.userPackId),
    packId: text('pack_id').references(() => packs.id),
    /** The grant that gave it; null for a copy drawn from a pack. */
    grantId: text('grant_id').references(() => grants.id),
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
    unique('pulls_grant_draw_unique').on(table.grantId, table.drawIndex),
    check(
      'pulls_origin_check',
      sql`(${table.userPackId} is not null and ${table.packId} is not null and ${table.grantId} is null) or (${table.userPackId} is null and ${table.packId} is null and ${table.grantId} is not null)`,
    ),
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

export type WalletRow = typeof wallets.$inferSelect;
export type LedgerRow = typeof walletLedger.$inferSelect;
export type PurchaseRow = typeof purchases.$inferSelect;
export type UserPackRow = typeof userPacks.$inferSelect;
export type PullRow = typeof pulls.$inferSelect;
