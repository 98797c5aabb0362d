import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { appleConsumptionConsents, appleHistoryCursor, appleNotifications } from '../../../db/schema.js';
import type { Database } from '../database/index.js';

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

export async function readCursor(db: Database): Promise<Date | null> {
  const [row] = await db.select().from(appleHistoryCursor).where(eq(appleHistoryCursor.id, 'history'));
  return row?.readUntil ?? null;
}

/** Moves the cursor forward only (a slower run that ends last never moves it back). */
export async function advanceCursor(db: Database, readUntil: Date): Promise<void> {
  await db
    .insert(appleHistoryCursor)
    .values({ id: 'history', readUntil })
    .onConflictDoUpdate({
      target: appleHistoryCursor.id,
      set: { readUntil: sql`greatest(${appleHistoryCursor.readUntil}, excluded.read_until)`, updatedAt: sql`now()` },
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
