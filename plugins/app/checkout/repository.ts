import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { type OrderRow, orders, stripeEvents } from '../../../db/schema.js';
import type { Database } from '../db.js';
import { afterCursor, type CursorKey, toPage } from '../pagination.js';

/** SQL of orders and the Stripe event inbox. Writes run in the caller's transaction. */

export async function insertOrder(
  tx: Database,
  order: { userId: string; productId: string; priceId: string; coins: number; amount: number; currency: string; ttlMs: number },
): Promise<OrderRow> {
  const [row] = await tx
    .insert(orders)
    .values({
      id: randomUUID(),
      userId: order.userId,
      productId: order.productId,
      priceId: order.priceId,
      coins: order.coins,
      amount: order.amount,
      currency: order.currency,
      expiresAt: sql`now() + ${`${order.ttlMs} milliseconds`}::interval`,
    })
    .returning();
  return row as OrderRow;
}

export async function attachSession(tx: Database, orderId: string, sessionId: string, url: string | null): Promise<OrderRow> {
  const [row] = await tx.update(orders).set({ providerRef: sessionId, checkoutUrl: url, updatedAt: sql`now()` }).where(eq(orders.id, orderId)).returning();
  return row as OrderRow;
}

export async function findOrder(db: Database, id: string, options: { userId?: string; lock?: boolean } = {}): Promise<OrderRow | undefined> {
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

/** Moves a pending order on; answers the row only when it was pending (status only moves forward). */
export async function settlePending(
  tx: Database,
  id: string,
  change: { status: 'fulfilled'; paymentIntent: string | null } | { status: 'failed'; reason: string } | { status: 'expired' },
): Promise<OrderRow | undefined> {
  const [row] = await tx
    .update(orders)
    .set({
      status: change.status,
      updatedAt: sql`now()`,
      ...(change.status === 'fulfilled' ? { fulfilledAt: sql`now()`, paymentIntent: change.paymentIntent } : {}),
      ...(change.status === 'failed' ? { failureReason: change.reason.slice(0, 500) } : {}),
    })
    .where(and(eq(orders.id, id), eq(orders.status, 'pending')))
    .returning();
  return row;
}

/**
 * Pending orders with a Checkout Session to look at, oldest first: those past their expiry, or
 * (for reconciliation) those older than `olderThanMs` and not yet past it.
 */
export async function pendingOrders(db: Database, which: { pastExpiry: boolean; olderThanMs: number }, limit: number): Promise<OrderRow[]> {
  return db
    .select()
    .from(orders)
    .where(
      and(
        eq(orders.status, 'pending'),
        sql`${orders.providerRef} is not null`,
        which.pastExpiry ? sql`${orders.expiresAt} <= now()` : sql`${orders.expiresAt} > now() and ${orders.createdAt} < now() - ${`${which.olderThanMs} milliseconds`}::interval`,
      ),
    )
    .orderBy(orders.createdAt, orders.id)
    .limit(limit);
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
  change: { opened: { coinsReversed: number; taken: number; uncollected: number } } | { won: { coinsReversed: number; uncollected: number } },
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
      : { status: 'fulfilled' as const, coinsReversed: change.won.coinsReversed, uncollected: change.won.uncollected, disputeTaken: 0, disputeUncollected: 0 };
  await tx.update(orders).set({ ...set, updatedAt: sql`now()` }).where(eq(orders.id, id));
}

/** Every order, or only those whose refunds could not take back every coin, newest first (platform admins). */
export async function listAdminOrders(db: Database, page: { limit: number; after?: CursorKey; uncollectedOnly: boolean }) {
  const rows = await db
    .select()
    .from(orders)
    .where(and(page.uncollectedOnly ? sql`${orders.uncollected} > 0` : undefined, afterCursor(orders.createdAt, orders.id, page.after)))
    .orderBy(sql`${orders.createdAt} desc, ${orders.id} desc`)
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

/** Records a Stripe event as handled; false when it was handled before. */
export async function recordEvent(tx: Database, id: string, type: string): Promise<boolean> {
  const inserted = await tx.insert(stripeEvents).values({ id, type }).onConflictDoNothing().returning({ id: stripeEvents.id });
  return inserted.length === 1;
}
