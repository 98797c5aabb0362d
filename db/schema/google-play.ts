import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { ts } from './timestamps.js';
import { users } from './users.js';

// Google Play: purchases credited and their consumes, the notifications handled, and where the
// voided-purchases job got to. The orders themselves are checkout's.

export const GOOGLE_CONSUME_STATES = ['pending', 'consumed', 'abandoned'] as const;

/**
 * A purchase token credited (or found credited) by this service, and its consume: Google refunds a
 * purchase not consumed within three days, so a consume that failed waits here for the
 * `retry-google-consumes` job. `abandoned`: Google voided it, or the three days passed.
 */
export const googlePlayPurchases = pgTable(
  'google_play_purchases',
  {
    purchaseToken: text('purchase_token').primaryKey(),
    /** The Play product id (SKU) the token was bought as. */
    sku: text('sku').notNull(),
    /** The order's store reference: Google's order id (or `token:` and the token, for a purchase without one). */
    storeRef: text('store_ref').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    purchasedAt: ts('purchased_at').notNull(),
    consumeState: text('consume_state', { enum: GOOGLE_CONSUME_STATES }).notNull().default('pending'),
    consumeAttempts: integer('consume_attempts').notNull().default(0),
    /** When the job tries the consume again (pending only). */
    nextConsumeAt: ts('next_consume_at'),
    lastConsumeError: text('last_consume_error'),
    consumedAt: ts('consumed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [
    check('google_play_purchases_state_check', sql`${table.consumeState} in ('pending', 'consumed', 'abandoned')`),
    check(
      'google_play_purchases_consumed_check',
      sql`(${table.consumeState} = 'consumed') = (${table.consumedAt} is not null)`,
    ),
    index('google_play_purchases_due_idx').on(table.nextConsumeAt).where(sql`${table.consumeState} = 'pending'`),
    index('google_play_purchases_store_ref_idx').on(table.storeRef),
  ],
);

/** Pub/Sub messages handled, by message id: a redelivery is acknowledged and changes nothing. Pruned after 14 days. */
export const googlePlayMessages = pgTable(
  'google_play_messages',
  {
    messageId: text('message_id').primaryKey(),
    kind: text('kind').notNull(),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (table) => [index('google_play_messages_received_idx').on(table.receivedAt)],
);

/** How far a sweep over Google has read: `voided`, the end of the last `reconcile-google-voided` window. */
export const googlePlaySync = pgTable('google_play_sync', {
  name: text('name').primaryKey(),
  /** Where the last complete read ended (null: none yet). */
  syncedUntil: ts('synced_until'),
  /** The last run that asked Google, whatever came of it: runs are spaced from it. */
  attemptedAt: ts('attempted_at'),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export type GooglePlayPurchaseRow = typeof googlePlayPurchases.$inferSelect;
