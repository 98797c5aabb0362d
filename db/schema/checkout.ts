import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { ORDER_PROVIDERS, ORDER_REVIEW_REASONS, ORDER_STATUSES, sqlValues } from '../../schemas/enums.js';
import { ts } from './timestamps.js';
import { users } from './users.js';

// Checkout: coin bundles sold for money, their prices, the orders and the Stripe events handled.

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
    /** The bundle's SKUs in the App Store and Google Play (unset: not sold there). */
    appleProductId: text('apple_product_id').unique(),
    googleProductId: text('google_product_id').unique(),
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
 * An order of a coin bundle, paid through Stripe Checkout or bought in a mobile store. It keeps what was sold (coins, amount,
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
    /** The Stripe price it was made at; store orders have none (the store sets its prices). */
    priceId: text('price_id').references(() => prices.id),
    coins: integer('coins').notNull(),
    /** What was paid, in minor units of `currency`; null when the store does not say (Google Play). */
    amount: integer('amount'),
    currency: text('currency'),
    status: text('status', { enum: ORDER_STATUSES }).notNull().default('pending'),
    provider: text('provider', { enum: ORDER_PROVIDERS }).notNull().default('stripe'),
    /** The Checkout Session's id, once it exists; the store's transaction (Apple) or order id (Google). */
    providerRef: text('provider_ref'),
    /** Store orders: when the store says the purchase was made. */
    purchasedAt: ts('purchased_at'),
    /** Store orders: the store's time of the last refund or reversal applied, so an older one arriving late changes nothing. */
    storeEventAt: ts('store_event_at'),
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
    /** Until when a Stripe order waits for payment; store orders are settled when made and have none. */
    expiresAt: ts('expires_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    fulfilledAt: ts('fulfilled_at'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [
    check('orders_status_check', sql`${table.status} in (${sql.raw(sqlValues(ORDER_STATUSES))})`),
    check(
      'orders_amounts_check',
      sql`${table.coins} > 0 and (${table.amount} is null or ${table.amount} > 0) and (${table.amount} is null) = (${table.currency} is null)`,
    ),
    check('orders_provider_check', sql`${table.provider} in (${sql.raw(sqlValues(ORDER_PROVIDERS))})`),
    // A Stripe order is made at a price, for its amount, and waits until it expires.
    check(
      'orders_stripe_check',
      sql`${table.provider} <> 'stripe' or (${table.priceId} is not null and ${table.amount} is not null and ${table.expiresAt} is not null)`,
    ),
    // A store order exists only once the store took the payment: it is made settled, with the store's reference.
    check(
      'orders_store_check',
      sql`${table.provider} = 'stripe' or (${table.providerRef} is not null and ${table.status} not in ('pending', 'expired'))`,
    ),
    uniqueIndex('orders_provider_ref_idx').on(table.provider, table.providerRef),
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
