import { and, desc, eq, gte, sql } from 'drizzle-orm';
import {
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '../../../db/schema.js';
import type { WebhookDeliveryStatus, WebhookDisabledReason } from '../../../schemas/enums.js';
import type { Database } from '../database/index.js';
import { afterCursor, type PageRequest, toPage } from '../pagination.js';
import { jsonb, rowsOf, textArray } from '../rows.js';
import type { AttemptEffects, EndpointSubscription } from './rules.js';

/** SQL of webhook endpoints, deliveries and attempts. Writes run inside the caller's transaction. */

/** The sender is woken by a NOTIFY on this channel when deliveries become due (fan-out, replay). */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';

export async function notifySender(tx: Database): Promise<void> {
  await tx.execute(sql`select pg_notify(${DELIVERIES_CHANNEL}, '')`);
}

export async function insertEndpoint(tx: Database, row: typeof webhookEndpoints.$inferInsert) {
  const [created] = await tx.insert(webhookEndpoints).values(row).returning();
  return created as WebhookEndpointRow;
}

export async function findEndpoint(db: Database, id: string, options: { lock?: boolean } = {}) {
  const query = db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  const [row] = options.lock ? await query.for('no key update') : await query;
  return row;
}

/** A scope's endpoints (a team's, or the platform's: teamId null), newest first. */
export async function listEndpoints(db: Database, teamId: string | null, page: PageRequest) {
  const rows = await db
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        teamId === null ? sql`${webhookEndpoints.teamId} is null` : eq(webhookEndpoints.teamId, teamId),
        afterCursor(webhookEndpoints.createdAt, webhookEndpoints.id, page.after),
      ),
    )
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

export async function updateEndpoint(tx: Database, id: string, changes: Partial<typeof webhookEndpoints.$inferInsert>) {
  const [row] = await tx
    .update(webhookEndpoints)
    .set({ ...changes, updatedAt: sql`now()` })
    .where(eq(webhookEndpoints.id, id))
    .returning();
  return row as WebhookEndpointRow;
}

export async function deleteEndpoint(tx: Database, id: string): Promise<void> {
  await tx.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id));
}

/** Disables an endpoint and gives up its pending deliveries (replayable once it is enabled again). */
export async function disableEndpoint(
  tx: Database,
  id: string,
  disable: { reason: WebhookDisabledReason; detail: string },
  at: Date,
): Promise<void> {
  await tx
    .update(webhookEndpoints)
    .set({ enabled: false, disabledReason: disable.reason, disabledDetail: disable.detail, disabledAt: at })
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.enabled, true)));
  await tx
    .update(webhookDeliveries)
    .set({
      status: 'failed',
      nextAttemptAt: null,
      leaseId: null,
      lockedUntil: null,
      lastError: sql`coalesce(${webhookDeliveries.lastError} || '; ', '') || 'the endpoint was disabled'`,
    })
    .where(and(eq(webhookDeliveries.endpointId, id), eq(webhookDeliveries.status, 'pending')));
}

/** The enabled endpoints and what they subscribe to: what the fan-out matches events against. */
export async function subscribedEndpoints(tx: Database): Promise<EndpointSubscription[]> {
  return tx
    .select({
      id: webhookEndpoints.id,
      teamId: webhookEndpoints.teamId,
      eventTypes: webhookEndpoints.eventTypes,
      createdAt: webhookEndpoints.createdAt,
    })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.enabled, true));
}

export interface NewDelivery {
  id: string;
  endpointId: string;
  messageId: string;
  eventId: number | null;
  eventType: string;
  body: string;
}

/** Inserts deliveries due now, once per (endpoint, message id); answers how many were new. */
export async function insertDeliveries(tx: Database, deliveries: readonly NewDelivery[]): Promise<number> {
  if (deliveries.length === 0) return 0;
  const rows = rowsOf(
    await tx.execute(sql`
      insert into webhook_deliveries (id, endpoint_id, message_id, event_id, event_type, body, next_attempt_at)
      select d.id, d.endpoint_id, d.message_id, d.event_id, d.event_type, d.body, now()
      from jsonb_to_recordset(${jsonb(
        deliveries.map((d) => ({
          id: d.id,
          endpoint_id: d.endpointId,
          message_id: d.messageId,
          event_id: d.eventId,
          event_type: d.eventType,
          body: d.body,
        })),
      )}) as d(id text, endpoint_id text, message_id text, event_id bigint, event_type text, body text)
      on conflict (endpoint_id, message_id) do nothing
      returning 1`),
  );
  return rows.length;
}

/** A delivery taken by one sender: what an attempt needs, and the lease that proves it is this sender's. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  leaseId: string;
  messageId: string;
  eventType: string;
  body: string;
  attempts: number;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

const CLAIMED_COLUMNS = sql`d.id, d.endpoint_id, d.lease_id, d.message_id, d.event_type, d.body, d.attempts,
  e.url, e.secret, e.previous_secret, e.previous_secret_expires_at`;

type ClaimedRow = {
  id: string;
  endpoint_id: string;
  lease_id: string;
  message_id: string;
  event_type: string;
  body: string;
  attempts: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | Date | null;
};

const toClaimed = (row: ClaimedRow): ClaimedDelivery => ({
  id: row.id,
  endpointId: row.endpoint_id,
  leaseId: row.lease_id,
  messageId: row.message_id,
  eventType: row.event_type,
  body: row.body,
  attempts: row.attempts,
  url: row.url,
  secret: row.secret,
  previousSecret: row.previous_secret,
  previousSecretExpiresAt: row.previous_secret_expires_at === null ? null : new Date(row.previous_secret_expires_at),
});

/**
 * Takes up to `limit` deliveries due by `at` of enabled endpoints for one sender, at most
 * `perEndpoint` of one endpoint and none of `busy` endpoints: each gets the lease `leaseId` until
 * `leaseMs` from now and its attempt counted. Rows another sender is taking are skipped, and a
 * leased row is taken again only once its lease has run out (its sender died), so no delivery is
 * sent by two senders at once. The earliest due first, among a bounded window of candidates.
 */
export async function claimDue(
  db: Database,
  options: { at: Date; limit: number; perEndpoint: number; busy: readonly string[]; leaseId: string; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  const free = sql`(d.locked_until is null or d.locked_until < clock_timestamp())`;
  const rows = rowsOf<ClaimedRow>(
    await db.execute(sql`
      with candidates as (
        select d.id, d.endpoint_id, d.next_attempt_at from webhook_deliveries d
        where d.status = 'pending' and d.next_attempt_at <= ${options.at} and ${free}
          and d.endpoint_id <> all(${textArray(options.busy)})
        order by d.next_attempt_at limit ${options.limit * 10}),
      ranked as (
        select id, row_number() over (partition by endpoint_id order by next_attempt_at, id) as n from candidates),
      due as (
        select d.id from webhook_deliveries d
        join ranked r on r.id = d.id and r.n <= ${options.perEndpoint}
        join webhook_endpoints e on e.id = d.endpoint_id and e.enabled
        where d.status = 'pending' and ${free}
        order by d.next_attempt_at, d.id limit ${options.limit}
        for update of d skip locked)
      update webhook_deliveries d
      set lease_id = ${options.leaseId}, attempts = d.attempts + 1,
          locked_until = clock_timestamp() + ${`${options.leaseMs} milliseconds`}::interval
      from due, webhook_endpoints e
      where d.id = due.id and e.id = d.endpoint_id
      returning ${CLAIMED_COLUMNS}`),
  );
  return rows.map(toClaimed);
}

/** Inserts a test ping already leased to the caller, who sends it at once. */
export async function insertLeasedPing(
  tx: Database,
  delivery: NewDelivery,
  leaseId: string,
  leaseMs: number,
): Promise<ClaimedDelivery> {
  const [row] = rowsOf<ClaimedRow>(
    await tx.execute(sql`
      with d as (
        insert into webhook_deliveries (id, endpoint_id, message_id, event_type, body, next_attempt_at, attempts,
                                        lease_id, locked_until)
        values (${delivery.id}, ${delivery.endpointId}, ${delivery.messageId}, ${delivery.eventType}, ${delivery.body},
                now(), 1, ${leaseId}, clock_timestamp() + ${`${leaseMs} milliseconds`}::interval)
        returning *)
      select ${CLAIMED_COLUMNS} from d join webhook_endpoints e on e.id = d.endpoint_id`),
  );
  return toClaimed(row as ClaimedRow);
}

/**
 * Records an attempt and applies its effects to the delivery, if the sender still holds its lease
 * (a replay or a lease that ran out hands it on): answers the delivery so changed, or undefined.
 * The attempt is recorded either way while the delivery exists: it happened.
 */
export async function recordAttempt(
  tx: Database,
  claimed: Pick<ClaimedDelivery, 'id' | 'leaseId'>,
  attempt: typeof webhookAttempts.$inferInsert,
  effects: AttemptEffects['delivery'] & { lastStatusCode: number | null },
): Promise<WebhookDeliveryRow | undefined> {
  await tx.execute(sql`
    insert into webhook_attempts (id, delivery_id, attempted_at, outcome, status_code, error, duration_ms, address,
                                  response_body)
    select ${attempt.id}::text, d.id, ${attempt.attemptedAt}::timestamptz, ${attempt.outcome}::text,
           ${attempt.statusCode ?? null}::int, ${attempt.error ?? null}::text, ${attempt.durationMs}::int,
           ${attempt.address ?? null}::text, ${attempt.responseBody ?? null}::text
    from webhook_deliveries d where d.id = ${claimed.id}`);
  const updated = await tx
    .update(webhookDeliveries)
    .set({ ...effects, leaseId: null, lockedUntil: null })
    .where(and(eq(webhookDeliveries.id, claimed.id), eq(webhookDeliveries.leaseId, claimed.leaseId)))
    .returning();
  return updated[0];
}

export async function findDelivery(db: Database, endpointId: string, id: string) {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.endpointId, endpointId)));
  return row;
}

/** An endpoint's deliveries, newest first, of one status or all. */
export async function listDeliveries(
  db: Database,
  endpointId: string,
  status: WebhookDeliveryStatus | undefined,
  page: PageRequest,
) {
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpointId),
        status === undefined ? undefined : eq(webhookDeliveries.status, status),
        afterCursor(webhookDeliveries.createdAt, webhookDeliveries.id, page.after),
      ),
    )
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

/** A delivery's attempts, newest first. */
export async function listAttempts(db: Database, deliveryId: string, page: PageRequest) {
  const rows = await db
    .select()
    .from(webhookAttempts)
    .where(
      and(
        eq(webhookAttempts.deliveryId, deliveryId),
        afterCursor(webhookAttempts.attemptedAt, webhookAttempts.id, page.after),
      ),
    )
    .orderBy(desc(webhookAttempts.attemptedAt), desc(webhookAttempts.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.attemptedAt, id: row.id }));
}

const REPLAYED = {
  status: 'pending' as const,
  attempts: 0,
  nextAttemptAt: sql`now()`,
  deliveredAt: null,
  leaseId: null,
  lockedUntil: null,
};

/** Sends a delivery again from the start of the schedule, now (a delivery being sent is handed on). */
export async function replayDelivery(tx: Database, endpointId: string, id: string): Promise<WebhookDeliveryRow> {
  const [row] = await tx
    .update(webhookDeliveries)
    .set(REPLAYED)
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.endpointId, endpointId)))
    .returning();
  return row as WebhookDeliveryRow;
}

/** Deletes up to `limit` deliveries that ended (not pending) and were created before `before`, their attempts with them. */
export async function pruneEnded(db: Database, before: Date, limit: number): Promise<number> {
  const rows = rowsOf(
    await db.execute(sql`
      delete from webhook_deliveries where id in (
        select id from webhook_deliveries where status <> 'pending' and created_at < ${before}
        order by created_at limit ${limit})
      returning 1`),
  );
  return rows.length;
}

/** Sends again every failed delivery of the endpoint created at or after `since`; answers how many. */
export async function replayFailedSince(tx: Database, endpointId: string, since: Date): Promise<number> {
  const rows = await tx
    .update(webhookDeliveries)
    .set(REPLAYED)
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpointId),
        eq(webhookDeliveries.status, 'failed'),
        gte(webhookDeliveries.createdAt, since),
      ),
    )
    .returning({ id: webhookDeliveries.id });
  return rows.length;
}
