import { and, eq, inArray, sql } from 'drizzle-orm';
import { type OrderRow, orders, stripeEvents } from '../../../db/schema.js';
import type { OrderReviewReason } from '../../../schemas/enums.js';
import type { Database } from '../database/index.js';
import { afterCursor, type CursorKey, toPage } from '../pagination.js';

/** SQL of orders and the Stripe event inbox. Writes run in the caller's transaction. */

/** What a new order is made of: what was sold, as it stood, and until when it waits for payment. */
export interface NewOrder {
  id: string;
  userId: string;
  productId: string;
  priceId: string;
  coins: number;
  amount: number;
  currency: string;
  expiresAt: Date;
}

export async function insertOrder(
  tx: Database,
  order: NewOrder & { providerRef: string; checkoutUrl: string },
): Promise<OrderRow> {
  const [row] = await tx.insert(orders).values(order).returning();
  return row as OrderRow;
}

export async function findOrder(
  db: Database,
  id: string,
  options: { userId?: string; lock?: boolean } = {},
): Promise<OrderRow | undefined> {
  const query = db
    .select()
    .from(orders)
    .where(and(eq(orders.id, id), options.userId ? eq(orders.userId, options.userId) : undefined));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

export async function listOrders(db: Database, userId: string, page: { limit: number; after?: CursorKey }) {
  const rows = await db
    .select()
    .from(orders)
    .where(and(eq(orders.userId, userId), afterCursor(orders.createdAt, orders.id, page.after)))
    .orderBy(sql`${orders.createdAt} desc, ${orders.id} desc`)
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

/**
 * Moves a pending order on; answers the row only when it was pending (status only moves forward).
 * A paid order that could not be credited fails with `needsReview` and keeps its PaymentIntent, so
 * its refund is still recognised.
 */
export async function settlePending(
  tx: Database,
  id: string,
  change:
    | { status: 'fulfilled'; paymentIntent: string }
    | { status: 'failed'; reason: string; review?: OrderReviewReason; paymentIntent?: string | null }
    | { status: 'expired' },
): Promise<OrderRow | undefined> {
  const [row] = await tx
    .update(orders)
    .set({
      status: change.status,
      updatedAt: sql`now()`,
      ...(change.status === 'fulfilled' ? { fulfilledAt: sql`now()`, paymentIntent: change.paymentIntent } : {}),
      ...(change.status === 'failed'
        ? {
            failureReason: change.reason.slice(0, 500),
            needsReview: change.review !== undefined,
            reviewReason: change.review ?? null,
            paymentIntent: change.paymentIntent ?? null,
          }
        : {}),
    })
    .where(and(eq(orders.id, id), eq(orders.status, 'pending')))
    .returning();
  return row;
}

/**
 * Pending orders with a Checkout Session to look at: those past their expiry, or (for
 * reconciliation) those older than `olderThanMs` and not yet past it. The least recently checked
 * come first and are marked checked as they are taken, so orders Stripe cannot settle yet go to the
 * back and never starve newer ones. Rows locked at that moment (a webhook settling them) are
 * skipped. Run it in a transaction: the rows picked are the rows marked.
 */
export async function takePendingOrders(
  tx: Database,
  which: { pastExpiry: boolean; olderThanMs: number },
  limit: number,
): Promise<OrderRow[]> {
  const due = await tx
    .select({ id: orders.id })
    .from(orders)
    .where(
      and(
        eq(orders.status, 'pending'),
        sql`${orders.providerRef} is not null`,
        which.pastExpiry
          ? sql`${orders.expiresAt} <= now()`
          : sql`${orders.expiresAt} > now() and ${orders.createdAt} < now() - ${`${which.olderThanMs} milliseconds`}::interval`,
      ),
    )
    .orderBy(sql`${orders.lastCheckedAt} asc nulls first`, orders.createdAt, orders.id)
    .limit(limit)
    .for('update', { skipLocked: true });
  if (due.length === 0) return [];
  const rows = await tx
    .update(orders)
    .set({ lastCheckedAt: sql`now()` })
    .where(
      inArray(
        orders.id,
        due.map((row) => row.id),
      ),
    )
    .returning();
  return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

export async function findOrderByPaymentIntent(tx: Database, paymentIntent: string): Promise<OrderRow | undefined> {
  const [row] = await tx.select().from(orders).where(eq(orders.paymentIntent, paymentIntent)).for('update');
  return row;
}

export async function recordRefund(
  tx: Database,
  id: string,
  refund: { amountRefunded: number; coinsReversed: number; uncollectedAdded: number; fullyRefunded: boolean },
): Promise<void> {
  await tx
    .update(orders)
    .set({
      amountRefunded: sql`greatest(${orders.amountRefunded}, ${refund.amountRefunded})`,
      coinsReversed: refund.coinsReversed,
      uncollected: sql`${orders.uncollected} + ${refund.uncollectedAdded}`,
      ...(refund.fullyRefunded ? { status: 'refunded' as const } : {}),
      updatedAt: sql`now()`,
    })
    .where(eq(orders.id, id));
}

/** A dispute opened (coins reversed) or closed as won (the coins it took returned). */
export async function recordDispute(
  tx: Database,
  id: string,
  change:
    | { opened: { coinsReversed: number; taken: number; uncollected: number } }
    | {
        won: {
          status: 'fulfilled' | 'refunded';
          coinsReversed: number;
          uncollected: number;
          review?: OrderReviewReason;
        };
      },
): Promise<void> {
  const set =
    'opened' in change
      ? {
          status: 'disputed' as const,
          coinsReversed: change.opened.coinsReversed,
          uncollected: sql`${orders.uncollected} + ${change.opened.uncollected}`,
          disputeTaken: change.opened.taken,
          disputeUncollected: change.opened.uncollected,
        }
      : {
          status: change.won.status,
          coinsReversed: change.won.coinsReversed,
          uncollected: change.won.uncollected,
          disputeTaken: 0,
          disputeUncollected: 0,
          ...(change.won.review ? { needsReview: true, reviewReason: change.won.review } : {}),
        };
  await tx
    .update(orders)
    .set({ ...set, updatedAt: sql`now()` })
    .where(eq(orders.id, id));
}

/** A refund during a dispute: the refund's share of the coins stops belonging to the dispute. */
export async function recordRefundDuringDispute(
  tx: Database,
  id: string,
  refund: { amountRefunded: number; disputeTaken: number; disputeUncollected: number },
): Promise<void> {
  await tx
    .update(orders)
    .set({
      amountRefunded: sql`greatest(${orders.amountRefunded}, ${refund.amountRefunded})`,
      disputeTaken: refund.disputeTaken,
      disputeUncollected: refund.disputeUncollected,
      updatedAt: sql`now()`,
    })
    .where(eq(orders.id, id));
}

/** A refund of a paid order that was never credited: recorded; a full one settles its review. */
export async function recordUncreditedRefund(
  tx: Database,
  id: string,
  refund: { amountRefunded: number; fullyRefunded: boolean },
): Promise<void> {
  await tx
    .update(orders)
    .set({
      amountRefunded: sql`greatest(${orders.amountRefunded}, ${refund.amountRefunded})`,
      ...(refund.fullyRefunded ? { needsReview: false } : {}),
      updatedAt: sql`now()`,
    })
    .where(eq(orders.id, id));
}

/**
 * Flags a paid order that was never credited (failed, or paid after it expired) and keeps the
 * payment it names, so that payment's refund or dispute still finds it.
 */
export async function flagUncredited(
  tx: Database,
  id: string,
  flag: { reason?: OrderReviewReason; paymentIntent: string | null },
): Promise<void> {
  await tx
    .update(orders)
    .set({
      needsReview: true,
      ...(flag.reason ? { reviewReason: flag.reason } : {}),
      paymentIntent: sql`coalesce(${orders.paymentIntent}, ${flag.paymentIntent})`,
      updatedAt: sql`now()`,
    })
    .where(eq(orders.id, id));
}

/** Orders a platform admin may credit after review: paid, matching, never credited. */
export const CREDITABLE_REVIEW_REASONS = [
  'balance_limit',
  'paid_after_expiry',
] as const satisfies readonly OrderReviewReason[];

/**
 * Moves a paid, never-credited order to fulfilled (a platform admin's decision after review), so
 * its top-up and any later refund or dispute follow the usual paths. Answers the row when it could.
 */
export async function fulfilReviewed(tx: Database, id: string): Promise<OrderRow | undefined> {
  const [row] = await tx
    .update(orders)
    .set({ status: 'fulfilled', fulfilledAt: sql`now()`, needsReview: false, updatedAt: sql`now()` })
    .where(
      and(
        eq(orders.id, id),
        inArray(orders.status, ['failed', 'expired']),
        // A store order was paid when it was made; a Stripe order shows its payment.
        sql`(${orders.paymentIntent} is not null or ${orders.provider} <> 'stripe')`,
        inArray(orders.reviewReason, [...CREDITABLE_REVIEW_REASONS]),
      ),
    )
    .returning();
  return row;
}

/** Clears (or sets) an order's review flag; answers the row, or undefined when there is no such order. */
export async function setNeedsReview(db: Database, id: string, needsReview: boolean): Promise<OrderRow | undefined> {
  const [row] = await db
    .update(orders)
    .set({ needsReview, updatedAt: sql`now()` })
    .where(eq(orders.id, id))
    .returning();
  return row;
}

/** Every order, or only those with coins uncollected or waiting for review, newest first (platform admins). */
export async function listAdminOrders(
  db: Database,
  page: { limit: number; after?: CursorKey; uncollectedOnly: boolean; needsReviewOnly: boolean },
) {
  const rows = await db
    .select()
    .from(orders)
    .where(
      and(
        page.uncollectedOnly ? sql`${orders.uncollected} > 0` : undefined,
        page.needsReviewOnly ? eq(orders.needsReview, true) : undefined,
        afterCursor(orders.createdAt, orders.id, page.after),
      ),
    )
    .orderBy(sql`${orders.createdAt} desc, ${orders.id} desc`)
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

/** Records a Stripe event as handled; false when it was handled before. */
export async function recordEvent(tx: Database, id: string, type: string): Promise<boolean> {
  const inserted = await tx
    .insert(stripeEvents)
    .values({ id, type })
    .onConflictDoNothing()
    .returning({ id: stripeEvents.id });
  return inserted.length === 1;
}
