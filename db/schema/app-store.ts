import { sql } from 'drizzle-orm';
import { boolean, check, index, pgTable, text } from 'drizzle-orm/pg-core';
import { APPLE_NOTIFICATION_SOURCES, sqlValues } from '../../schemas/enums.js';
import { ts } from './timestamps.js';
import { users } from './users.js';

// The App Store: its server notifications handled, the fans' consent to share consumption
// information with Apple, and how far the notification history has been read.

/**
 * App Store Server Notifications handled, by `notificationUUID`: stored in the transaction of the
 * notification's effect, so one delivered twice (or by the webhook and by the history job) is
 * handled once.
 */
export const appleNotifications = pgTable(
  'apple_notifications',
  {
    notificationUuid: text('notification_uuid').primaryKey(),
    type: text('type').notNull(),
    subtype: text('subtype'),
    /** The transaction it is about, when it is about one. */
    transactionId: text('transaction_id'),
    /** When Apple signed it. */
    signedAt: ts('signed_at').notNull(),
    /** `webhook`: delivered by Apple; `history`: found by the recovery job. */
    source: text('source', { enum: APPLE_NOTIFICATION_SOURCES }).notNull(),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (table) => [
    check(
      'apple_notifications_source_check',
      sql`${table.source} in (${sql.raw(sqlValues(APPLE_NOTIFICATION_SOURCES))})`,
    ),
    index('apple_notifications_transaction_idx').on(table.transactionId),
  ],
);

/**
 * A fan's answer to "may this service tell Apple how the coins of a refund request were used"
 * (App Store consumption information). No row: no consent, and nothing is sent.
 */
export const appleConsumptionConsents = pgTable('apple_consumption_consents', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id),
  consented: boolean('consented').notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** How far the notification history has been read: one row, moved forward by each run of the job. */
export const appleHistoryCursor = pgTable(
  'apple_history_cursor',
  {
    id: text('id').primaryKey(),
    /** The next run reads the history from here (a little before, for notifications signed late); null: never read whole. */
    readUntil: ts('read_until'),
    /** The last run that asked Apple, whatever came of it: runs are spaced from it. */
    attemptedAt: ts('attempted_at'),
    /** A window too long for one run: the next run goes on from this page of it. */
    resumeStart: ts('resume_start'),
    resumeEnd: ts('resume_end'),
    resumeToken: text('resume_token'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [check('apple_history_cursor_one_row', sql`${table.id} = 'history'`)],
);
