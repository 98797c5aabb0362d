import { and, eq, inArray, lt, lte, sql } from 'drizzle-orm';
import {
  type GooglePlayPurchaseRow,
  googlePlayMessages,
  googlePlayPurchases,
  googlePlaySync,
} from '../../../db/schema.js';
import type { Database } from '../database/index.js';

/** SQL of Google Play's purchase tokens, handled notifications and sweep positions. */

/**
 * Remembers a credited purchase token, waiting to be consumed, due for `retry-google-consumes`
 * `leaseMs` from now: if the consume that follows is cut short (a crash, an unexpected error)
 * before it is recorded as done or failed, the job still tries it. A token already remembered is
 * left as it is (its consume may be done or scheduled). Answers the row as it stands.
 */
export async function rememberPurchase(
  db: Database,
  purchase: { purchaseToken: string; sku: string; storeRef: string; userId: string; purchasedAt: Date },
  leaseMs: number,
): Promise<GooglePlayPurchaseRow> {
  await db
    .insert(googlePlayPurchases)
    .values({ ...purchase, nextConsumeAt: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
    .onConflictDoNothing();
  const [row] = await db
    .select()
    .from(googlePlayPurchases)
    .where(eq(googlePlayPurchases.purchaseToken, purchase.purchaseToken));
  return row as GooglePlayPurchaseRow;
}

export async function findPurchase(db: Database, purchaseToken: string): Promise<GooglePlayPurchaseRow | undefined> {
  const [row] = await db.select().from(googlePlayPurchases).where(eq(googlePlayPurchases.purchaseToken, purchaseToken));
  return row;
}

/** The consume is done (here, or by Google's account of it). */
export async function markConsumed(db: Database, purchaseToken: string): Promise<void> {
  await db
    .update(googlePlayPurchases)
    .set({ consumeState: 'consumed', consumedAt: sql`now()`, nextConsumeAt: null, updatedAt: sql`now()` })
    .where(and(eq(googlePlayPurchases.purchaseToken, purchaseToken), eq(googlePlayPurchases.consumeState, 'pending')));
}

/** A consume failed: counted, its error kept, tried again at `nextAt`. */
export async function markConsumeFailed(
  db: Database,
  purchaseToken: string,
  failure: { error: string; nextAt: Date },
): Promise<void> {
  await db
    .update(googlePlayPurchases)
    .set({
      consumeAttempts: sql`${googlePlayPurchases.consumeAttempts} + 1`,
      lastConsumeError: failure.error.slice(0, 500),
      nextConsumeAt: failure.nextAt,
      updatedAt: sql`now()`,
    })
    .where(and(eq(googlePlayPurchases.purchaseToken, purchaseToken), eq(googlePlayPurchases.consumeState, 'pending')));
}

/** No consume is wanted any more: Google voided the purchase, or its three days passed. */
export async function abandonConsume(db: Database, purchaseTokens: string[], reason: string): Promise<void> {
  if (purchaseTokens.length === 0) return;
  await db
    .update(googlePlayPurchases)
    .set({ consumeState: 'abandoned', nextConsumeAt: null, lastConsumeError: reason, updatedAt: sql`now()` })
    .where(
      and(inArray(googlePlayPurchases.purchaseToken, purchaseTokens), eq(googlePlayPurchases.consumeState, 'pending')),
    );
}

/**
 * Pending consumes that are due, oldest first, each pushed `leaseMs` into the future as it is
 * taken, so a second run at the same time (or a run that dies) does not take it again at once.
 */
export async function takeDueConsumes(db: Database, limit: number, leaseMs: number): Promise<GooglePlayPurchaseRow[]> {
  return db.transaction(async (tx) => {
    const due = await tx
      .select({ token: googlePlayPurchases.purchaseToken })
      .from(googlePlayPurchases)
      .where(and(eq(googlePlayPurchases.consumeState, 'pending'), lte(googlePlayPurchases.nextConsumeAt, sql`now()`)))
      .orderBy(googlePlayPurchases.nextConsumeAt)
      .limit(limit)
      .for('update', { skipLocked: true });
    if (due.length === 0) return [];
    return tx
      .update(googlePlayPurchases)
      .set({ nextConsumeAt: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
      .where(
        inArray(
          googlePlayPurchases.purchaseToken,
          due.map((row) => row.token),
        ),
      )
      .returning();
  });
}

/** Whether the Pub/Sub message was handled before. */
export async function messageHandled(db: Database, messageId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: googlePlayMessages.messageId })
    .from(googlePlayMessages)
    .where(eq(googlePlayMessages.messageId, messageId));
  return row !== undefined;
}

/** Records a message as handled, once its effect is done. */
export async function recordMessage(db: Database, messageId: string, kind: string): Promise<void> {
  await db.insert(googlePlayMessages).values({ messageId, kind }).onConflictDoNothing();
}

/** Forgets handled messages older than Pub/Sub redelivers (7 days), twice over. */
export async function forgetOldMessages(db: Database): Promise<number> {
  const gone = await db
    .delete(googlePlayMessages)
    .where(lt(googlePlayMessages.receivedAt, sql`now() - interval '14 days'`))
    .returning({ id: googlePlayMessages.messageId });
  return gone.length;
}

/** Where a sync's last complete read ended, and when it last asked Google. */
export async function syncProgress(
  db: Database,
  name: string,
): Promise<{ syncedUntil: Date | null; attemptedAt: Date | null }> {
  const [row] = await db.select().from(googlePlaySync).where(eq(googlePlaySync.name, name));
  return { syncedUntil: row?.syncedUntil ?? null, attemptedAt: row?.attemptedAt ?? null };
}

/** A run of the sync is asking Google now. */
export async function markSyncAttempt(db: Database, name: string, at: Date): Promise<void> {
  await db
    .insert(googlePlaySync)
    .values({ name, attemptedAt: at })
    .onConflictDoUpdate({ target: googlePlaySync.name, set: { attemptedAt: at, updatedAt: sql`now()` } });
}

export async function setSyncedUntil(db: Database, name: string, until: Date): Promise<void> {
  await db
    .insert(googlePlaySync)
    .values({ name, syncedUntil: until })
    .onConflictDoUpdate({ target: googlePlaySync.name, set: { syncedUntil: until, updatedAt: sql`now()` } });
}
