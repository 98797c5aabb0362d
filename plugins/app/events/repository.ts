import { sql } from 'drizzle-orm';
import type { DomainEvent, NewEvent } from '../../../schemas/events.js';
import type { Database } from '../database/index.js';
import { jsonb, rowsOf } from '../rows.js';

/** SQL of the event log and its consumers' cursors. Writes run inside the caller's transaction. */

/** Consumers are woken by a NOTIFY on this channel when a transaction that appended events commits. */
export const EVENTS_CHANNEL = 'domain_events';

/**
 * Appends events in one statement; with `notify`, a NOTIFY delivered when (and only if) the
 * transaction commits (PostgreSQL folds the NOTIFYs of one transaction into one).
 */
export async function appendEvents(tx: Database, events: readonly NewEvent[], notify: boolean): Promise<void> {
  const rows = events.map((event) => ({
    type: event.type,
    user_id: event.userId ?? null,
    team_id: event.teamId ?? null,
    subject: event.subject,
    data: event.data,
  }));
  const insert = sql`
    insert into events (type, user_id, team_id, subject, data)
    select e.type, e.user_id, e.team_id, e.subject, e.data
    from jsonb_to_recordset(${jsonb(rows)}) as e(type text, user_id text, team_id text, subject text, data jsonb)`;
  await tx.execute(
    notify
      ? sql`with appended as (${insert} returning 1)
            select pg_notify(${EVENTS_CHANNEL}, '') from (select 1 from appended limit 1) as any_appended`
      : insert,
  );
}

/** A NOTIFY of its own, outside any change's transaction. */
export async function notifyConsumers(db: Database): Promise<void> {
  await db.execute(sql`select pg_notify(${EVENTS_CHANNEL}, '')`);
}

export interface Cursor {
  txid: string;
  eventId: number;
}

/**
 * Creates the consumer's cursor at the start of the log if it has none, committed on its own: an
 * insert made in a consuming transaction would make a concurrent one wait instead of skipping.
 */
export async function ensureCursor(db: Database, consumer: string): Promise<void> {
  await db.execute(sql`insert into event_cursors (consumer) values (${consumer}) on conflict do nothing`);
}

/**
 * The consumer's cursor, locked until the transaction ends: the lock is what makes one instance
 * at a time consume. With `skipLocked`, undefined when another transaction holds it.
 */
export async function lockCursor(tx: Database, consumer: string, skipLocked: boolean): Promise<Cursor | undefined> {
  const [row] = rowsOf<{ txid: string; event_id: string }>(
    await tx.execute(
      sql`select txid::text as txid, event_id from event_cursors where consumer = ${consumer} for update ${sql.raw(skipLocked ? 'skip locked' : '')}`,
    ),
  );
  return row ? { txid: row.txid, eventId: Number(row.event_id) } : undefined;
}

/**
 * The next events after `cursor` in (txid, id) order, only from transactions older than every
 * transaction still running: an event is read once its transaction and every earlier one has
 * ended, so one committing late (a lower id, a later commit) is read after, never skipped.
 */
export async function eventsAfter(tx: Database, cursor: Cursor, limit: number): Promise<(DomainEvent & Cursor)[]> {
  const rows = rowsOf<{
    id: string;
    txid: string;
    type: DomainEvent['type'];
    occurred_at: string | Date;
    user_id: string | null;
    team_id: string | null;
    subject: string;
    data: DomainEvent['data'];
  }>(
    await tx.execute(sql`
      select id, txid::text as txid, type, occurred_at, user_id, team_id, subject, data from events
      where (txid, id) > (${cursor.txid}::xid8, ${cursor.eventId})
        and txid < pg_snapshot_xmin(pg_current_snapshot())
      order by txid, id limit ${limit}`),
  );
  return rows.map(
    (row) =>
      ({
        id: String(row.id),
        eventId: Number(row.id),
        txid: row.txid,
        type: row.type,
        occurredAt: new Date(row.occurred_at),
        userId: row.user_id,
        teamId: row.team_id,
        subject: row.subject,
        data: row.data,
      }) as DomainEvent & Cursor,
  );
}

export async function moveCursor(tx: Database, consumer: string, cursor: Cursor): Promise<void> {
  await tx.execute(
    sql`update event_cursors set txid = ${cursor.txid}::xid8, event_id = ${cursor.eventId}, updated_at = now() where consumer = ${consumer}`,
  );
}

/** How far behind a consumer is: the events appended after its cursor (all of them before its first run). */
export async function backlogOf(db: Database, consumer: string): Promise<number> {
  const [row] = rowsOf<{ backlog: number }>(
    await db.execute(sql`
      select count(*)::int as backlog from events e
      left join event_cursors c on c.consumer = ${consumer}
      where c.consumer is null or (e.txid, e.id) > (c.txid, c.event_id)`),
  );
  return row?.backlog ?? 0;
}
