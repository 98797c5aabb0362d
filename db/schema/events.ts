import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, customType, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { sqlValues } from '../../schemas/enums.js';
import { EVENT_TYPES } from '../../schemas/events.js';
import { ts } from './timestamps.js';

// The domain event log and the cursors of its consumers.

/** A 64-bit transaction id, read and written as text (it outgrows a JavaScript number). */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * One row per change another domain may care about, appended in the transaction of the change.
 * `txid` is that transaction's id: consumers read in (txid, id) order, only below the oldest
 * transaction still running, so an event whose transaction commits late is never skipped.
 */
export const events = pgTable(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    txid: xid8('txid').notNull().default(sql`pg_current_xact_id()`),
    type: text('type').notNull(),
    occurredAt: ts('occurred_at').notNull().defaultNow(),
    userId: text('user_id'),
    teamId: text('team_id'),
    subject: text('subject').notNull(),
    data: jsonb('data').notNull(),
  },
  (table) => [
    check('events_type_check', sql`${table.type} in (${sql.raw(sqlValues(EVENT_TYPES))})`),
    index('events_order_idx').on(table.txid, table.id),
    index('events_user_idx').on(table.userId, table.id),
  ],
);

/** Where each consumer has read to; its row lock is what lets one instance at a time consume. */
export const eventCursors = pgTable('event_cursors', {
  consumer: text('consumer').primaryKey(),
  txid: xid8('txid').notNull().default(sql`'0'::xid8`),
  eventId: bigint('event_id', { mode: 'number' }).notNull().default(0),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

export type EventRow = typeof events.$inferSelect;
