import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, pgTable, text, unique } from 'drizzle-orm/pg-core';
import {
  sqlValues,
  WEBHOOK_ATTEMPT_OUTCOMES,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_DISABLED_REASONS,
} from '../../schemas/enums.js';
import { EVENT_TYPES } from '../../schemas/events.js';
import { teams } from './teams.js';
import { ts } from './timestamps.js';

// Outbound webhooks: the endpoints teams and platform admins register, the deliveries of events
// to them, and every attempt of each delivery.

/**
 * An endpoint. `secret` signs every delivery: kept as given (HMAC needs the secret itself, not a
 * hash of it) and never answered after the call that created it; `previous_secret` still signs
 * beside it until `previous_secret_expires_at`, 24 hours after a rotation.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    /** The team whose events it receives; null: a platform endpoint, receiving every event. */
    teamId: text('team_id').references(() => teams.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    description: text('description').notNull().default(''),
    eventTypes: text('event_types').array().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    disabledReason: text('disabled_reason', { enum: WEBHOOK_DISABLED_REASONS }),
    disabledAt: ts('disabled_at'),
    disabledDetail: text('disabled_detail'),
    /** The first failed attempt of the current run of failures (null after a success). */
    failingSince: ts('failing_since'),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (table) => [
    check(
      'webhook_endpoints_event_types_check',
      sql`cardinality(${table.eventTypes}) >= 1 and ${table.eventTypes} <@ array[${sql.raw(sqlValues(EVENT_TYPES))}]::text[]`,
    ),
    check(
      'webhook_endpoints_disabled_check',
      sql`${table.enabled} = (${table.disabledReason} is null) and (${table.disabledReason} is null) = (${table.disabledAt} is null)`,
    ),
    check(
      'webhook_endpoints_disabled_reason_check',
      sql`${table.disabledReason} in (${sql.raw(sqlValues(WEBHOOK_DISABLED_REASONS))})`,
    ),
    check(
      'webhook_endpoints_previous_secret_check',
      sql`(${table.previousSecret} is null) = (${table.previousSecretExpiresAt} is null)`,
    ),
    index('webhook_endpoints_team_idx').on(table.teamId, table.createdAt.desc(), table.id.desc()),
  ],
);

/**
 * One event (or test ping) to send to one endpoint: once per (endpoint, webhook id), whatever
 * reruns of the fan-out do. `lease_id` and `locked_until` mark the instance sending it now.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    /** The `webhook-id` header: the event id, or `ping_<uuid>` for a test ping. */
    messageId: text('message_id').notNull(),
    eventId: bigint('event_id', { mode: 'number' }),
    eventType: text('event_type').notNull(),
    /** The JSON body, exactly as signed and sent on every attempt. */
    body: text('body').notNull(),
    status: text('status', { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default('pending'),
    /** Attempts since it was created or last replayed: the retry schedule's step. */
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    leaseId: text('lease_id'),
    lockedUntil: ts('locked_until'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    deliveredAt: ts('delivered_at'),
  },
  (table) => [
    unique('webhook_deliveries_message_key').on(table.endpointId, table.messageId),
    check(
      'webhook_deliveries_status_check',
      sql`${table.status} in (${sql.raw(sqlValues(WEBHOOK_DELIVERY_STATUSES))})`,
    ),
    check(
      'webhook_deliveries_pending_check',
      sql`(${table.status} = 'pending') = (${table.nextAttemptAt} is not null)`,
    ),
    index('webhook_deliveries_due_idx').on(table.nextAttemptAt).where(sql`${table.status} = 'pending'`),
    index('webhook_deliveries_list_idx').on(table.endpointId, table.createdAt.desc(), table.id.desc()),
    index('webhook_deliveries_ended_idx').on(table.createdAt).where(sql`${table.status} <> 'pending'`),
  ],
);

/** Every attempt of a delivery, and how it ended. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attemptedAt: ts('attempted_at').notNull().defaultNow(),
    outcome: text('outcome', { enum: WEBHOOK_ATTEMPT_OUTCOMES }).notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    address: text('address'),
    /** The start of the answer's body (at most 1 KiB), for the endpoint's owner. */
    responseBody: text('response_body'),
  },
  (table) => [
    check('webhook_attempts_outcome_check', sql`${table.outcome} in (${sql.raw(sqlValues(WEBHOOK_ATTEMPT_OUTCOMES))})`),
    index('webhook_attempts_delivery_idx').on(table.deliveryId, table.attemptedAt.desc(), table.id.desc()),
  ],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;
