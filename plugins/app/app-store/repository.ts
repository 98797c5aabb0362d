import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { appleConsumptionConsents, appleHistoryCursor, appleNotifications } from '../../../db/schema.js';
import type { Database } from '../database/index.js';
import type { HistoryProgress } from './rules.js';

/** SQL of the App Store notification inbox, consumption consents and the history cursor. */

export interface NotificationRecord {
  notificationUuid: string;
  type: string;
  subtype: string | null;
  transactionId: string | null;
  signedAt: Date;
  source: 'webhook' | 'history';
}

export async function notificationSeen(db: Database, uuid: string): Promise<boolean> {
  const [row] = await db
    .select({ uuid: appleNotifications.notificationUuid })
    .from(appleNotifications)
    .where(eq(appleNotifications.notificationUuid, uuid));
  return row !== undefined;
}

/** Records a notification as handled; false when it was handled before (or is being handled now: this waits for that). */
export async function recordNotification(tx: Database, record: NotificationRecord): Promise<boolean> {
  const inserted = await tx
    .insert(appleNotifications)
    .values(record)
    .onConflictDoNothing()
    .returning({ uuid: appleNotifications.notificationUuid });
  return inserted.length === 1;
}

export async function findConsent(db: Database, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ consented: appleConsumptionConsents.consented })
    .from(appleConsumptionConsents)
    .where(eq(appleConsumptionConsents.userId, userId));
  return row?.consented ?? false;
}

export async function saveConsent(db: Database, userId: string, consented: boolean): Promise<void> {
  await db
    .insert(appleConsumptionConsents)
    .values({ userId, consented })
    .onConflictDoUpdate({
      target: appleConsumptionConsents.userId,
      set: { consented, updatedAt: sql`now()` },
    });
}

/** How far the notification history has been read; null before the first run. */
export async function readHistoryProgress(db: Database): Promise<HistoryProgress | null> {
  const [row] = await db.select().from(appleHistoryCursor).where(eq(appleHistoryCursor.id, 'history'));
  if (!row) return null;
  const { readUntil, attemptedAt, resumeStart, resumeEnd, resumeToken } = row;
  return {
    readUntil,
    attemptedAt,
    resume: resumeStart && resumeEnd && resumeToken ? { start: resumeStart, end: resumeEnd, token: resumeToken } : null,
  };
}

const saveProgress = (db: Database, values: Partial<typeof appleHistoryCursor.$inferInsert>) =>
  db
    .insert(appleHistoryCursor)
    .values({ id: 'history', ...values })
    .onConflictDoUpdate({ target: appleHistoryCursor.id, set: { ...values, updatedAt: sql`now()` } });

/** A run is asking Apple now. */
export async function markHistoryAttempt(db: Database, at: Date): Promise<void> {
  await saveProgress(db, { attemptedAt: at });
}

/** Where the next run goes on in a window too long for one (null: nowhere, read the next window). */
export async function saveHistoryResume(db: Database, resume: HistoryProgress['resume']): Promise<void> {
  await saveProgress(db, {
    resumeStart: resume?.start ?? null,
    resumeEnd: resume?.end ?? null,
    resumeToken: resume?.token ?? null,
  });
}

/** A window read whole: the cursor moves forward only (a slower run that ends last never moves it back). */
export async function advanceCursor(db: Database, readUntil: Date): Promise<void> {
  await db
    .insert(appleHistoryCursor)
    .values({ id: 'history', readUntil })
    .onConflictDoUpdate({
      target: appleHistoryCursor.id,
      set: {
        readUntil: sql`greatest(${appleHistoryCursor.readUntil}, excluded.read_until)`,
        resumeStart: null,
        resumeEnd: null,
        resumeToken: null,
        updatedAt: sql`now()`,
      },
    });
}

/**
 * Whether Apple's last word on a transaction is a refund or revocation (a REFUND_REVERSED after it
 * undoes it): a purchase reported after its refund was notified must not be credited.
 */
export async function revokedByNotification(db: Database, transactionId: string): Promise<boolean> {
  const [row] = await db
    .select({ type: appleNotifications.type })
    .from(appleNotifications)
    .where(
      and(
        eq(appleNotifications.transactionId, transactionId),
        inArray(appleNotifications.type, ['REFUND', 'REVOKE', 'REFUND_REVERSED']),
      ),
    )
    .orderBy(desc(appleNotifications.signedAt))
    .limit(1);
  return row !== undefined && row.type !== 'REFUND_REVERSED';
}
