import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type Stripe from 'stripe';
import type { OrderRow } from '../../../db/schema.js';
import type { AdminOrder, Order } from '../../../schemas/checkout.js';
import type { CheckoutConfig } from '../../external/env.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../errors.js';
import { decodeCursor } from '../pagination.js';
import { findPrice, findProduct } from '../products/repository.js';
import { appendLedgerEntry, balanceOf, lockedBalance } from '../wallets/repository.js';
import { MAX_BALANCE } from '../wallets/rules.js';
import {
  findOrder,
  findOrderByPaymentIntent,
  flagUncredited,
  fulfilReviewed,
  insertOrder,
  listAdminOrders,
  type NewOrder,
  listOrders,
  recordDispute,
  recordEvent,
  recordRefund,
  recordRefundDuringDispute,
  recordUncreditedRefund,
  setNeedsReview,
  settlePending,
  takePendingOrders,
} from './repository.js';
import {
  creditProblem,
  disputePlan,
  disputeReturnPlan,
  isFullRefund,
  isPaid,
  type PaidSession,
  paymentIntentId,
  paymentMismatch,
  RECHECK_AFTER_MS,
  refundDuringDisputePlan,
  refundPlan,
} from './rules.js';

const orderNotFound = () => new NotFoundError('order_not_found', 'You have no order with this id.');
const unavailable = () =>
  new ServiceUnavailableError('checkout_unavailable', 'Checkout is not available right now; try again later.', 30);

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
  return {
    ...toOrder(row),
    userId: row.userId,
    paymentIntent: row.paymentIntent,
    amountRefunded: row.amountRefunded,
    coinsReversed: row.coinsReversed,
    uncollected: row.uncollected,
    needsReview: row.needsReview,
    reviewReason: row.reviewReason,
  };
}

/** A Checkout Session made for an order that is not stored yet. */
export interface PreparedCheckout {
  order: NewOrder;
  sessionId: string;
  url: string;
}

/** The Stripe event types that move an order; every other type is acknowledged and ignored. */
const SESSION_EVENTS = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'checkout.session.expired',
]);

/**
 * Orders of coin bundles paid through Stripe Checkout. One `fulfil` for every path (the webhook,
 * the re-check on read): a conditional update moves the order from pending, and the top-up's
 * unique reference makes a second credit impossible.
 */
export function createCheckoutService(
  db: DatabaseHandle,
  stripe: Stripe | null,
  config: CheckoutConfig | null,
  log: FastifyBaseLogger,
) {
  /**
   * Fulfils (or fails) a pending order from a Checkout Session; a settled order changes no more. A
   * paid session that cannot be credited (it does not match the order, or the wallet is full) fails
   * the order for a platform admin to review, and the event is still acknowledged: a retry would
   * fail the same way.
   */
  async function fulfil(
    tx: Database,
    order: OrderRow,
    session: PaidSession,
  ): Promise<'fulfilled' | 'failed' | 'unpaid' | 'settled'> {
    if (order.status === 'expired' && isPaid(session) && !order.paymentIntent) {
      // Stripe took money for an order this service had already let go: it stays expired, keeps the
      // payment (so its refund finds it) and waits for an admin. Flagged once, not on every delivery.
      log.error(
        { orderId: order.id, sessionId: session.id },
        'a Checkout Session was paid after its order expired: the order needs review',
      );
      await flagUncredited(tx, order.id, { reason: 'paid_after_expiry', paymentIntent: paymentIntentId(session) });
    }
    if (order.status !== 'pending') return 'settled';
    if (!isPaid(session)) return 'unpaid';
    const paymentIntent = paymentIntentId(session);
    const problem =
      paymentMismatch(order, session) ?? creditProblem(await lockedBalance(tx, order.userId), order.coins, MAX_BALANCE);
    if (problem || !paymentIntent) {
      const { reason, detail } = problem ?? {
        reason: 'no_payment_intent' as const,
        detail: 'paid without a PaymentIntent',
      };
      log.error(
        { orderId: order.id, sessionId: session.id, reason, detail },
        'a paid Checkout Session cannot be credited: the order needs review',
      );
      await settlePending(tx, order.id, { status: 'failed', reason: detail, review: reason, paymentIntent });
      return 'failed';
    }
    const settled = await settlePending(tx, order.id, { status: 'fulfilled', paymentIntent });
    if (!settled) return 'settled';
    await appendLedgerEntry(
      tx,
      { userId: order.userId, amount: order.coins, kind: 'topup', reference: order.id },
      new Date(),
    );
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
    return settleFromSession(order.id, session);
  }

  /**
   * Applies a Checkout Session as Stripe has it now to its order, under the order's row lock:
   * expired, a pending order expires; otherwise `fulfil` decides. Answers whether the order changed.
   */
  function settleFromSession(orderId: string, session: Stripe.Checkout.Session): Promise<boolean> {
    return db.transaction(async (tx) => {
      const locked = await findOrder(tx, orderId, { lock: true });
      if (!locked) return false;
      if (session.status === 'expired')
        return locked.status === 'pending' && (await settlePending(tx, orderId, { status: 'expired' })) !== undefined;
      const outcome = await fulfil(tx, locked, session);
      return outcome === 'fulfilled' || outcome === 'failed';
    });
  }

  /** One bounded batch of a job over pending orders; a Stripe error on one order leaves it for the next run. */
  async function reconcileBatch(which: { pastExpiry: boolean }, limit: number): Promise<number> {
    if (!stripe) return 0;
    let settled = 0;
    const due = await db.transaction((tx) =>
      takePendingOrders(tx, { pastExpiry: which.pastExpiry, olderThanMs: RECHECK_AFTER_MS }, limit),
    );
    for (const order of due) {
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
    if (order.status === 'disputed') {
      const plan = refundDuringDisputePlan(order, charge.amount_refunded);
      await recordRefundDuringDispute(tx, order.id, { amountRefunded: charge.amount_refunded, ...plan });
      return;
    }
    if (order.status === 'failed' || order.status === 'expired') {
      // Paid but never credited: there are no coins to take back; a full refund settles its review.
      await recordUncreditedRefund(tx, order.id, {
        amountRefunded: charge.amount_refunded,
        fullyRefunded: isFullRefund(charge),
      });
      return;
    }
    if (order.status !== 'fulfilled' && order.status !== 'refunded') {
      log.warn(
        { chargeId: charge.id, orderId: order.id, status: order.status },
        'a refund of an order that was never paid: ignored',
      );
      return;
    }
    const plan = refundPlan(order, charge.amount_refunded, await lockedBalance(tx, order.userId));
    if (plan.take > 0) {
      await appendLedgerEntry(
        tx,
        {
          userId: order.userId,
          amount: -plan.take,
          kind: 'refund',
          reference: order.id,
          reason: 'the payment was refunded',
        },
        new Date(),
      );
    }
    await recordRefund(tx, order.id, {
      amountRefunded: charge.amount_refunded,
      coinsReversed: plan.target,
      uncollectedAdded: plan.uncollected,
      fullyRefunded: plan.fullyRefunded,
    });
    if (plan.uncollected > 0)
      log.warn(
        { orderId: order.id, uncollected: plan.uncollected },
        'a refund could not take back every coin: recorded as uncollected',
      );
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
    throw new ServiceUnavailableError(
      'order_not_settled',
      'No fulfilled order has this payment yet; deliver the event again later.',
      60,
    );
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
    if (order.status === 'failed' || order.status === 'expired') {
      // Paid but never credited: no coins to take back, but the payment is contested: an admin must look.
      log.warn(
        { disputeId: dispute.id, orderId: order.id },
        'a dispute of a payment that was never credited: the order needs review',
      );
      await flagUncredited(tx, order.id, { paymentIntent: order.paymentIntent });
      return;
    }
    if (order.status !== 'fulfilled') {
      log.warn({ disputeId: dispute.id }, 'a dispute for no fulfilled order of ours: ignored');
      return;
    }
    const plan = disputePlan(order, await lockedBalance(tx, order.userId));
    if (plan.take > 0) {
      await appendLedgerEntry(
        tx,
        {
          userId: order.userId,
          amount: -plan.take,
          kind: 'refund',
          reference: order.id,
          reason: 'the payment is disputed',
        },
        new Date(),
      );
    }
    await recordDispute(tx, order.id, {
      opened: { coinsReversed: plan.target, taken: plan.take, uncollected: plan.uncollected },
    });
    log.warn(
      { orderId: order.id, disputeId: dispute.id, taken: plan.take, uncollected: plan.uncollected },
      'a payment is disputed: its coins are taken back',
    );
  }

  /**
   * A dispute closed: won, the coins it took come back (less any refunded meanwhile, which moved
   * them from the dispute to the refund); lost, the order stays disputed.
   */
  async function disputeClosed(tx: Database, dispute: Stripe.Dispute): Promise<void> {
    const order = await orderOfPayment(tx, dispute.payment_intent);
    if (order?.status !== 'disputed' || dispute.status !== 'won') return;
    const plan = disputeReturnPlan(order.disputeTaken, await lockedBalance(tx, order.userId), MAX_BALANCE);
    if (plan.returned > 0) {
      await appendLedgerEntry(
        tx,
        {
          userId: order.userId,
          amount: plan.returned,
          kind: 'adjustment',
          reference: order.id,
          reason: 'the dispute was won: coins returned',
        },
        new Date(),
      );
    }
    if (plan.blocked > 0)
      log.error(
        { orderId: order.id, blocked: plan.blocked },
        'a won dispute could not return every coin (the wallet is full): the order needs review',
      );
    await recordDispute(tx, order.id, {
      won: {
        status: order.amountRefunded >= order.amount ? 'refunded' : 'fulfilled',
        // Coins a full wallet kept from coming back stay reversed.
        coinsReversed: order.coinsReversed - plan.returned - order.disputeUncollected,
        uncollected: order.uncollected - order.disputeUncollected,
        ...(plan.blocked > 0 ? { review: 'dispute_return_blocked' as const } : {}),
      },
    });
  }

  /** The order a Checkout Session belongs to: its client_reference_id, which is the order id. */
  const orderIdOf = (session: Stripe.Checkout.Session) =>
    session.client_reference_id ?? session.metadata?.orderId ?? null;

  return {
    fulfil,

    /** `expire-orders`: pending orders past their expiry, settled with Stripe (a paid one is fulfilled, never expired). */
    expireOrders: (limit: number) => reconcileBatch({ pastExpiry: true }, limit),

    /** `reconcile-orders`: pending orders older than a minute, re-checked with Stripe, so a missed webhook costs nobody coins. */
    reconcileOrders: (limit: number) => reconcileBatch({ pastExpiry: false }, limit),

    /**
     * Checks the price and makes the Checkout Session for a new order id, outside any transaction:
     * a slow Stripe must not hold a database connection. Nothing is stored yet; a session whose
     * order is never stored is never shown to anyone and expires unpaid.
     */
    async prepareCheckout(userId: string, priceId: string): Promise<PreparedCheckout> {
      if (!stripe || !config)
        throw new ServiceUnavailableError('checkout_unavailable', 'Checkout is not configured on this service.');
      const price = await findPrice(db.orm, priceId);
      if (!price) throw new NotFoundError('price_not_found', 'No price with this id.');
      const product = await findProduct(db.orm, price.productId);
      if (!price.active || !product?.active) throw new ConflictError('price_inactive', 'This price is not on sale.');
      const coins = product.coins + product.bonusCoins;
      // Refused before the fan pays: a wallet that cannot take the coins would fail the paid order.
      const full = creditProblem(await balanceOf(db.orm, userId), coins, MAX_BALANCE);
      if (full) throw new ConflictError('balance_limit', `This bundle cannot be bought: ${full}.`);
      const order: NewOrder = {
        id: randomUUID(),
        userId,
        productId: product.id,
        priceId: price.id,
        coins,
        amount: price.unitAmount,
        currency: price.currency,
        expiresAt: new Date(Date.now() + config.ttlMs),
      };
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.create(
          {
            mode: 'payment',
            client_reference_id: order.id,
            metadata: { orderId: order.id },
            line_items: [
              {
                quantity: 1,
                price_data: {
                  currency: price.currency,
                  unit_amount: price.unitAmount,
                  product_data: { name: product.name },
                },
              },
            ],
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
      return { order, sessionId: session.id, url: session.url };
    },

    /** Stores the order of a prepared Checkout Session; inside the caller's transaction (the Idempotency-Key's). */
    async recordCheckout(
      tx: Database,
      prepared: PreparedCheckout,
    ): Promise<{ orderId: string; url: string; expiresAt: string }> {
      await insertOrder(tx, { ...prepared.order, providerRef: prepared.sessionId, checkoutUrl: prepared.url });
      return { orderId: prepared.order.id, url: prepared.url, expiresAt: prepared.order.expiresAt.toISOString() };
    },

    /**
     * A verified Stripe event, handled once: its id is recorded in the transaction of its effect,
     * so a duplicate (or one arriving while the first is handled) changes nothing.
     */
    handleEvent(event: Stripe.Event): Promise<void> {
      return db.transaction(async (tx) => {
        if (!(await recordEvent(tx, event.id, event.type))) return;
        if (event.type === 'charge.refunded') return refund(tx, event.data.object as Stripe.Charge, event);
        if (event.type === 'charge.dispute.created')
          return disputeOpened(tx, event.data.object as Stripe.Dispute, event);
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
        else if (event.type === 'checkout.session.async_payment_failed')
          await settlePending(tx, order.id, { status: 'failed', reason: 'the payment failed' });
        else await fulfil(tx, order, session);
      });
    },

    /** Every order, or those whose refunds left coins uncollected, or those waiting for review, for platform admins. */
    async adminOrders(query: { limit?: number; cursor?: string; uncollected?: boolean; needsReview?: boolean }) {
      const page = await listAdminOrders(db.orm, {
        limit: query.limit ?? 50,
        after: decodeCursor(query.cursor),
        uncollectedOnly: query.uncollected === true,
        needsReviewOnly: query.needsReview === true,
      });
      return { items: page.items.map(toAdminOrder), nextCursor: page.nextCursor };
    },

    /**
     * A platform admin credits a paid order that was never credited (the wallet was full, or it was
     * paid after it expired): it becomes fulfilled with its one top-up, so a later refund or dispute
     * takes the coins back as for any order. 409 for an order that is not such a one.
     */
    creditReviewedOrder(id: string, actorId: string): Promise<AdminOrder> {
      return db.transaction(async (tx) => {
        const fulfilled = await fulfilReviewed(tx, id);
        if (!fulfilled) {
          if (!(await findOrder(tx, id))) throw new NotFoundError('order_not_found', 'No order with this id.');
          throw new ConflictError(
            'order_not_creditable',
            'Only a paid order that was never credited, because the wallet was full or it was paid after it expired, can be credited; refund any other in Stripe.',
          );
        }
        await appendLedgerEntry(
          tx,
          {
            userId: fulfilled.userId,
            amount: fulfilled.coins,
            kind: 'topup',
            reference: fulfilled.id,
            reason: 'credited after review',
            actorId,
          },
          new Date(),
        );
        return toAdminOrder(fulfilled);
      });
    },

    /** A platform admin marks an order reviewed (or back to review). */
    async reviewOrder(id: string, needsReview: boolean): Promise<AdminOrder> {
      const row = await setNeedsReview(db.orm, id, needsReview);
      if (!row) throw new NotFoundError('order_not_found', 'No order with this id.');
      return toAdminOrder(row);
    },

    async orders(userId: string, query: { limit?: number; cursor?: string }) {
      const page = await listOrders(db.orm, userId, { limit: query.limit ?? 50, after: decodeCursor(query.cursor) });
      return { items: page.items.map(toOrder), nextCursor: page.nextCursor };
    },

    /** One order; a pending one older than a minute is re-checked with Stripe first (a missed webhook costs nobody coins). */
    async order(userId: string, id: string): Promise<Order> {
      const row = await findOrder(db.orm, id, { userId });
      if (!row) throw orderNotFound();
      if (
        row.status !== 'pending' ||
        !row.providerRef ||
        !stripe ||
        Date.now() - row.createdAt.getTime() < RECHECK_AFTER_MS
      )
        return toOrder(row);
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.retrieve(row.providerRef);
      } catch (error) {
        log.warn({ err: error, orderId: id }, 'could not re-check an order with Stripe; answering what is stored');
        return toOrder(row);
      }
      await settleFromSession(id, session);
      // As it stands now: settled here, or by a webhook or another read meanwhile.
      return toOrder((await findOrder(db.orm, id)) as OrderRow);
    },
  };
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;
