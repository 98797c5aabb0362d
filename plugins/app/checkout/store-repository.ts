import { and, eq, sql } from 'drizzle-orm';
import { type OrderRow, orders } from '../../../db/schema.js';
import type { OrderReviewReason } from '../../../schemas/enums.js';
import type { Database } from '../database/index.js';

/** SQL of the orders of mobile store purchases. Writes run in the caller's transaction. */

/** A store order as it is made: already paid, settled at once (fulfilled, or failed for review). */
export interface NewStoreOrder {
  id: string;
  userId: string;
  productId: string;
  coins: number;
  amount: number | null;
  currency: string | null;
  provider: 'apple' | 'google';
  providerRef: string;
  purchasedAt: Date;
  status: 'fulfilled' | 'failed';
  failureReason?: string;
  reviewReason?: OrderReviewReason;
}

/**
 * Stores a store purchase once: the unique (provider, provider_ref) makes a second insert (a replay,
 * or the same purchase reported by two requests at once: the second waits for the first to commit)
 * do nothing. Answers the row when this call made it.
 */
export async function insertStoreOrder(tx: Database, order: NewStoreOrder): Promise<OrderRow | undefined> {
  const [row] = await tx
    .insert(orders)
    .values({
      ...order,
      fulfilledAt: order.status === 'fulfilled' ? sql`now()` : null,
      needsReview: order.reviewReason !== undefined,
      reviewReason: order.reviewReason ?? null,
      failureReason: order.failureReason ?? null,
    })
    .onConflictDoNothing({ target: [orders.provider, orders.providerRef] })
    .returning();
  return row;
}

/**
 * Holds one store purchase until the transaction ends: its first report and every refund or
 * reversal of it take this lock first, so a refund handled while the purchase is being credited
 * either sees the order or is seen by the purchase.
 */
export async function lockStorePurchase(
  tx: Database,
  provider: 'apple' | 'google',
  providerRef: string,
): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`store-order:${provider}:${providerRef}`}, 0))`);
}

export async function findStoreOrder(
  tx: Database,
  provider: 'apple' | 'google',
  providerRef: string,
  options: { lock?: boolean } = {},
): Promise<OrderRow | undefined> {
  const query = tx
    .select()
    .from(orders)
    .where(and(eq(orders.provider, provider), eq(orders.providerRef, providerRef)));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

/**
 * A store's refund or revocation (`refunded`) or its reversal (`restored`) applied to an order: the
 * coins reversed and uncollected as they now stand, and the store's time of the change.
 */
export async function recordStoreChange(
  tx: Database,
  id: string,
  change: {
    status: 'fulfilled' | 'refunded';
    amountRefunded: number;
    coinsReversed: number;
    uncollected: number;
    at: Date;
    review?: OrderReviewReason;
  },
): Promise<void> {
  await tx
    .update(orders)
    .set({
      status: change.status,
      amountRefunded: change.amountRefunded,
      coinsReversed: change.coinsReversed,
      uncollected: change.uncollected,
      storeEventAt: change.at,
      ...(change.review ? { needsReview: true, reviewReason: change.review } : {}),
      updatedAt: sql`now()`,
    })
    .where(eq(orders.id, id));
}

/**
 * A store's change to a purchase that was never credited (a failed order): nothing to take back or
 * give. A refund settles its review; the refund's reversal (the store has the money again, the fan
 * still has no coins) opens it again.
 */
export async function recordStoreUncreditedChange(
  tx: Database,
  id: string,
  change: { amountRefunded: number; needsReview: boolean; at: Date },
): Promise<void> {
  await tx
    .update(orders)
    .set({
      amountRefunded: change.amountRefunded,
      needsReview: change.needsReview,
      storeEventAt: change.at,
      updatedAt: sql`now()`,
    })
    .where(eq(orders.id, id));
}

/** Remembers the store's time of a change that changed nothing else (a reversal that came before its refund). */
export async function markStoreEvent(tx: Database, id: string, at: Date): Promise<void> {
  await tx.update(orders).set({ storeEventAt: at, updatedAt: sql`now()` }).where(eq(orders.id, id));
}
