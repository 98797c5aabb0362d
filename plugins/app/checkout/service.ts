import type { FastifyBaseLogger } from 'fastify';
import type Stripe from 'stripe';
import type { OrderRow } from '../../../db/schema.js';
import type { AdminOrder, Order } from '../../../schemas/checkout.js';
import type { CheckoutConfig } from '../../external/env.js';
import type { Database, DatabaseHandle } from '../db.js';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../errors.js';
import { decodeCursor } from '../pagination.js';
import { findPrice, findProduct } from '../products/repository.js';
import { appendLedgerEntry, lockedBalance } from '../wallets/repository.js';
import { attachSession, findOrder, findOrderByPaymentIntent, insertOrder, listAdminOrders, listOrders, pendingOrders, recordDispute, recordEvent, recordRefund, settlePending } from './repository.js';
import { disputePlan, isPaid, type PaidSession, paymentIntentId, paymentMismatch, RECHECK_AFTER_MS, refundPlan } from './rules.js';

const orderNotFound = () => new NotFoundError('order_not_found', 'You have no order with this id.');
const unavailable = () => new ServiceUnavailableError('checkout_unavailable', 'Checkout is not available right now; try again later.', 30);

export function toOrder(row: OrderRow): Order {
  return {
    id: row.id,
    productId: row.productId,
    priceId: row.priceId,
    coins: row.coins,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    provider: row.provider,
    checkoutUrl: row.status === 'pending' ? row.checkoutUrl : null,
    failureReason: row.failureReason,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    fulfilledAt: row.fulfilledAt?.toISOString() ?? null,
  };
}

export function toAdminOrder(row: OrderRow): AdminOrder {
  return { ...toOrder(row), userId: row.userId, amountRefunded: row.amountRefunded, coinsReversed: row.coinsReversed, uncollected: row.uncollected };
}

/** The Stripe event types that move an order; every other type is acknowledged and ignored. */
const SESSION_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'checkout.session.async_payment_failed', 'checkout.session.expired']);

/**
 * Orders of coin bundles paid through Stripe Checkout. One `fulfil` for every path (the webhook,
 * the re-check on read): a conditional update moves the order from pending, and the top-up's
 * unique reference makes a second credit impossible.
 */
export function createCheckoutService(db: DatabaseHandle, stripe: Stripe | null, config: CheckoutConfig | null, log: FastifyBaseLogger) {
  /** Fulfils (or fails) a pending order from a Checkout Session; a settled order changes no more. */
  async function fulfil(tx: Database, order: OrderRow, session: PaidSession): Promise<'fulfilled' | 'failed' | 'unpaid' | 'settled'> {
    if (order.status !== 'pending') return 'settled';
    if (!isPaid(session)) return 'unpaid';
    const mismatch = paymentMismatch(order, session);
    if (mismatch) {
      log.error({ orderId: order.id, sessionId: session.id, mismatch }, 'a paid Checkout Session does not match its order: nothing credited');
      await settlePending(tx, order.id, { status: 'failed', reason: mismatch });
      return 'failed';
    }
    const settled = await settlePending(tx, order.id, { status: 'fulfilled', paymentIntent: paymentIntentId(session) });
    if (!settled) return 'settled';
    await appendLedgerEntry(tx, { userId: order.userId, amount: order.coins, kind: 'topup', reference: order.id }, new Date());
    return 'fulfilled';
  }

  /**
   * Settles a pending order from its session as Stripe has it now: paid, it is fulfilled; expired,
   * the order expires; still open past the order's expiry (`expireIfOpen`), the session is expired
   * at Stripe first, and whatever Stripe then says decides. Answers whether the order changed.
   */
  async function reconcile(order: OrderRow, options: { expireIfOpen: boolean }): Promise<boolean> {
    if (!stripe || !order.providerRef) return false;
    let session = await stripe.checkout.sessions.retrieve(order.providerRef);
    if (session.status === 'open' && options.expireIfOpen) {
      try {
        session = await stripe.checkout.sessions.expire(order.providerRef);
      } catch {
        // Paid or expired in the meantime: read it again.
        session = await stripe.checkout.sessions.retrieve(order.providerRef);
      }
    }
    return db.transaction(async (tx) => {
      const locked = await findOrder(tx, order.id, { lock: true });
      if (locked?.status !== 'pending') return false;
      if (session.status === 'expired') return (await settlePending(tx, order.id, { status: 'expired' })) !== undefined;
      const outcome = await fulfil(tx, locked, session);
      return outcome === 'fulfilled' || outcome === 'failed';
    });
  }

  /** One bounded batch of a job over pending orders; a Stripe error on one order leaves it for the next run. */
  async function reconcileBatch(which: { pastExpiry: boolean }, limit: number): Promise<number> {
    if (!stripe) return 0;
    let settled = 0;
    for (const order of await pendingOrders(db.orm, { pastExpiry: which.pastExpiry, olderThanMs: RECHECK_AFTER_MS }, limit)) {
      try {
        if (await reconcile(order, { expireIfOpen: which.pastExpiry })) settled += 1;
      } catch (error) {
        log.warn({ err: error, orderId: order.id }, 'could not settle an order with Stripe; the next run retries');
      }
    }
    return settled;
  }

  /**
   * A refund of an order's charge takes back the refunded share of its coins, never below zero;
   * what the balance cannot give back is recorded as uncollected (platform admins list it).
   */
  async function refund(tx: Database, charge: Stripe.Charge, event: Stripe.Event): Promise<void> {
    const order = await orderOfPayment(tx, charge.payment_intent);
    if (!order) return notYetFulfilled(event);
    if (order.status !== 'fulfilled' && order.status !== 'refunded') {
      log.warn({ chargeId: charge.id, orderId: order.id, status: order.status }, 'a refund of an order that is neither fulfilled nor refunded: ignored');
      return;
    }
    const plan = refundPlan(order, charge.amount_refunded, await lockedBalance(tx, order.userId));
    if (plan.take > 0) {
      await appendLedgerEntry(tx, { userId: order.userId, amount: -plan.take, kind: 'refund', reference: order.id, reason: 'the payment was refunded' }, new Date());
    }
    await recordRefund(tx, order.id, { amountRefunded: charge.amount_refunded, coinsReversed: plan.target, uncollectedAdded: plan.uncollected, fullyRefunded: plan.fullyRefunded });
    if (plan.uncollected > 0) log.warn({ orderId: order.id, uncollected: plan.uncollected }, 'a refund could not take back every coin: recorded as uncollected');
  }

  /**
   * A refund or dispute names its payment, which an order records when it is fulfilled. One that
   * arrives first (Stripe does not promise the order of events) must not be dropped, or the
   * later fulfilment would credit coins already refunded: it is refused (503, the inbox row rolls
   * back) and Stripe delivers it again. After a day it is taken for a charge that is not ours.
   */
  function notYetFulfilled(event: Stripe.Event): void {
    if (Date.now() / 1000 - event.created > 86_400) {
      log.warn({ eventId: event.id, type: event.type }, 'a refund or dispute for no order of ours: ignored');
      return;
    }
    throw new ServiceUnavailableError('order_not_settled', 'No fulfilled order has this payment yet; deliver the event again later.', 60);
  }

  const orderOfPayment = async (tx: Database, paymentIntent: string | Stripe.PaymentIntent | null) => {
    const id = typeof paymentIntent === 'string' ? paymentIntent : paymentIntent?.id;
    return id ? findOrderByPaymentIntent(tx, id) : undefined;
  };

  /** A dispute opened: every coin the order still grants is taken back, never below zero. */
  async function disputeOpened(tx: Database, dispute: Stripe.Dispute, event: Stripe.Event): Promise<void> {
    // An inquiry or early warning withdraws no money; it closes as `warning_closed`.
    if (dispute.status.startsWith('warning_')) return;
    const order = await orderOfPayment(tx, dispute.payment_intent);
    if (!order) return notYetFulfilled(event);
    if (order.status !== 'fulfilled') {
      log.warn({ disputeId: dispute.id }, 'a dispute for no fulfilled order of ours: ignored');
      return;
    }
    const plan = disputePlan(order, await lockedBalance(tx, order.userId));
    if (plan.take > 0) {
      await appendLedgerEntry(tx, { userId: order.userId, amount: -plan.take, kind: 'refund', reference: order.id, reason: 'the payment is disputed' }, new Date());
    }
    await recordDispute(tx, order.id, { opened: { coinsReversed: plan.target, taken: plan.take, uncollected: plan.uncollected } });
    log.warn({ orderId: order.id, disputeId: dispute.id, taken: plan.take, uncollected: plan.uncollected }, 'a payment is disputed: its coins are taken back');
  }

  /** A dispute closed: won, the coins it took come back; lost, the order stays disputed. */
  async function disputeClosed(tx: Database, dispute: Stripe.Dispute): Promise<void> {
    const order = await orderOfPayment(tx, dispute.payment_intent);
    if (order?.status !== 'disputed' || dispute.status !== 'won') return;
    if (order.disputeTaken > 0) {
      await appendLedgerEntry(tx, { userId: order.userId, amount: order.disputeTaken, kind: 'adjustment', reference: order.id, reason: 'the dispute was won: coins returned' }, new Date());
    }
    await recordDispute(tx, order.id, {
      won: { coinsReversed: order.coinsReversed - order.disputeTaken - order.disputeUncollected, uncollected: order.uncollected - order.disputeUncollected },
    });
  }

  /** The order a Checkout Session belongs to: its client_reference_id, which is the order id. */
  const orderIdOf = (session: Stripe.Checkout.Session) => session.client_reference_id ?? session.metadata?.orderId ?? null;

  return {
    fulfil,

    /** `expire-orders`: pending orders past their expiry, settled with Stripe (a paid one is fulfilled, never expired). */
    expireOrders: (limit: number) => reconcileBatch({ pastExpiry: true }, limit),

    /** `reconcile-orders`: pending orders older than a minute, re-checked with Stripe, so a missed webhook costs nobody coins. */
    reconcileOrders: (limit: number) => reconcileBatch({ pastExpiry: false }, limit),

    /** Creates the order and its Checkout Session; inside the caller's transaction (the Idempotency-Key's). */
    async startCheckout(tx: Database, userId: string, priceId: string): Promise<{ orderId: string; url: string; expiresAt: string }> {
      if (!stripe || !config) throw new ServiceUnavailableError('checkout_unavailable', 'Checkout is not configured on this service.');
      const price = await findPrice(tx, priceId);
      if (!price) throw new NotFoundError('price_not_found', 'No price with this id.');
      const product = await findProduct(tx, price.productId);
      if (!price.active || !product?.active) throw new ConflictError('price_inactive', 'This price is not on sale.');
      const order = await insertOrder(tx, {
        userId,
        productId: product.id,
        priceId: price.id,
        coins: product.coins + product.bonusCoins,
        amount: price.unitAmount,
        currency: price.currency,
        ttlMs: config.ttlMs,
      });
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.create(
          {
            mode: 'payment',
            client_reference_id: order.id,
            metadata: { orderId: order.id },
            line_items: [{ quantity: 1, price_data: { currency: price.currency, unit_amount: price.unitAmount, product_data: { name: product.name } } }],
            success_url: config.successUrl,
            cancel_url: config.cancelUrl,
            expires_at: Math.floor(order.expiresAt.getTime() / 1000),
          },
          // Stripe's own idempotency: a retry of this call never makes a second session.
          { idempotencyKey: `order-${order.id}` },
        );
      } catch (error) {
        log.error({ err: error, orderId: order.id }, 'Stripe refused or did not answer creating a Checkout Session');
        throw unavailable();
      }
      if (!session.url) throw unavailable();
      await attachSession(tx, order.id, session.id, session.url);
      return { orderId: order.id, url: session.url, expiresAt: order.expiresAt.toISOString() };
    },

    /**
     * A verified Stripe event, handled once: its id is recorded in the transaction of its effect,
     * so a duplicate (or one arriving while the first is handled) changes nothing.
     */
    handleEvent(event: Stripe.Event): Promise<void> {
      return db.transaction(async (tx) => {
        if (!(await recordEvent(tx, event.id, event.type))) return;
        if (event.type === 'charge.refunded') return refund(tx, event.data.object as Stripe.Charge, event);
        if (event.type === 'charge.dispute.created') return disputeOpened(tx, event.data.object as Stripe.Dispute, event);
        if (event.type === 'charge.dispute.closed') return disputeClosed(tx, event.data.object as Stripe.Dispute);
        if (!SESSION_EVENTS.has(event.type)) return;
        const session = event.data.object as Stripe.Checkout.Session;
        const orderId = orderIdOf(session);
        const order = orderId ? await findOrder(tx, orderId, { lock: true }) : undefined;
        if (!order || (order.providerRef && order.providerRef !== session.id)) {
          log.warn({ eventId: event.id, type: event.type, orderId }, 'a Stripe event for no order of ours: ignored');
          return;
        }
        if (event.type === 'checkout.session.expired') await settlePending(tx, order.id, { status: 'expired' });
        else if (event.type === 'checkout.session.async_payment_failed') await settlePending(tx, order.id, { status: 'failed', reason: 'the payment failed' });
        else await fulfil(tx, order, session);
      });
    },

    /** Every order, or those whose refunds left coins uncollected, for platform admins. */
    async adminOrders(query: { limit?: number; cursor?: string; uncollected?: boolean }) {
      const page = await listAdminOrders(db.orm, { limit: query.limit ?? 50, after: decodeCursor(query.cursor), uncollectedOnly: query.uncollected === true });
      return { items: page.items.map(toAdminOrder), nextCursor: page.nextCursor };
    },

    async orders(userId: string, query: { limit?: number; cursor?: string }) {
      const page = await listOrders(db.orm, userId, { limit: query.limit ?? 50, after: decodeCursor(query.cursor) });
      return { items: page.items.map(toOrder), nextCursor: page.nextCursor };
    },

    /** One order; a pending one older than a minute is re-checked with Stripe first (a missed webhook costs nobody coins). */
    async order(userId: string, id: string): Promise<Order> {
      const row = await findOrder(db.orm, id, { userId });
      if (!row) throw orderNotFound();
      if (row.status !== 'pending' || !row.providerRef || !stripe || Date.now() - row.createdAt.getTime() < RECHECK_AFTER_MS) return toOrder(row);
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.retrieve(row.providerRef);
      } catch (error) {
        log.warn({ err: error, orderId: id }, 'could not re-check an order with Stripe; answering what is stored');
        return toOrder(row);
      }
      return db.transaction(async (tx) => {
        const locked = (await findOrder(tx, id, { lock: true })) as OrderRow;
        if (session.status === 'expired') await settlePending(tx, id, { status: 'expired' });
        else await fulfil(tx, locked, session);
        return toOrder((await findOrder(tx, id)) as OrderRow);
      });
    },
  };
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;
