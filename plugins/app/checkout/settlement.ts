import type { FastifyBaseLogger } from 'fastify';
import type { OrderRow } from '../../../db/schema.js';
import type { StripeCharge, StripeDispute, StripeEvent } from '../../../schemas/checkout.js';
import type { Database } from '../database/index.js';
import { ServiceUnavailableError } from '../errors.js';
import { MAX_BALANCE } from '../wallets/rules.js';
import type { WalletsService } from '../wallets/service.js';
import type { EventsService } from '../events/service.js';
import {
  findOrderByPaymentIntent,
  flagUncredited,
  recordDispute,
  recordRefund,
  recordRefundDuringDispute,
  recordUncreditedRefund,
  settlePending,
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
  refundDuringDisputePlan,
  refundPlan,
  stripeOrder,
} from './rules.js';

/** What a refund or dispute reads of its event: a late one is told from one that is not ours by its age. */
export type EventMeta = Pick<StripeEvent, 'id' | 'type' | 'created'>;

/**
 * What Stripe's money movements do to an order and its coins, in the caller's transaction: a paid
 * session fulfils it, a refund or a dispute takes coins back (never below zero), a dispute won
 * returns them. Coins move through the wallets service only.
 */
export function createSettlement(deps: {
  wallets: Pick<WalletsService, 'balance' | 'credit' | 'debit'>;
  events: Pick<EventsService, 'append'>;
  log: FastifyBaseLogger;
}) {
  const { wallets, events, log } = deps;
  /** An order's coins credited: by the one `fulfil`, or by an admin after review. */
  const fulfilled = (
    tx: Database,
    order: Pick<OrderRow, 'id' | 'userId' | 'coins' | 'amount' | 'currency' | 'provider'>,
  ) =>
    events.append(tx, {
      type: 'order.fulfilled',
      userId: order.userId,
      subject: order.id,
      data: {
        orderId: order.id,
        coins: order.coins,
        amount: order.amount,
        currency: order.currency,
        provider: order.provider,
      },
    });
  const lockedBalance = (tx: Database, userId: string) => wallets.balance(tx, userId, { lock: true });
  /** Coins a refund or a dispute takes back from the buyer: one `refund` entry, none for 0. */
  const takeBack = async (tx: Database, order: { id: string; userId: string }, amount: number, reason: string) => {
    if (amount > 0)
      await wallets.debit(tx, { userId: order.userId, amount, kind: 'refund', reference: order.id, reason });
  };

  /** A refund (Stripe's or a store's) took coins back: its event, and a warning for what it could not take. */
  async function refunded(
    tx: Database,
    order: Pick<OrderRow, 'id' | 'userId'>,
    amountRefunded: number,
    plan: { take: number; uncollected: number },
  ): Promise<void> {
    await events.append(tx, {
      type: 'order.refunded',
      userId: order.userId,
      subject: order.id,
      data: { orderId: order.id, amountRefunded, coinsTakenBack: plan.take, coinsUncollected: plan.uncollected },
    });
    if (plan.uncollected > 0)
      log.warn(
        { orderId: order.id, uncollected: plan.uncollected },
        'a refund could not take back every coin: recorded as uncollected',
      );
  }

  /**
   * Fulfils (or fails) a pending order from a Checkout Session; a settled order changes no more. A
   * paid session that cannot be credited (it does not match the order, or the wallet is full) fails
   * the order for a platform admin to review, and the event is still acknowledged: a retry would
   * fail the same way. A conditional update moves the order from pending, and the top-up's unique
   * reference makes a second credit impossible.
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
      paymentMismatch(stripeOrder(order), session) ??
      creditProblem(await lockedBalance(tx, order.userId), order.coins, MAX_BALANCE);
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
    await wallets.credit(tx, { userId: order.userId, amount: order.coins, kind: 'topup', reference: order.id });
    await fulfilled(tx, order);
    return 'fulfilled';
  }

  /**
   * A refund or dispute names its payment, which an order records when it is fulfilled. One that
   * arrives first (Stripe does not promise the order of events) must not be dropped, or the
   * later fulfilment would credit coins already refunded: it is refused (503, the inbox row rolls
   * back) and Stripe delivers it again. After a day it is taken for a charge that is not ours.
   */
  function notYetFulfilled(event: EventMeta): void {
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

  const orderOfPayment = async (tx: Database, payment: Pick<StripeCharge, 'payment_intent'>) => {
    const intent = payment.payment_intent;
    const id = typeof intent === 'string' ? intent : intent?.id;
    return id ? findOrderByPaymentIntent(tx, id) : undefined;
  };

  /**
   * A refund of an order's charge takes back the refunded share of its coins, never below zero;
   * what the balance cannot give back is recorded as uncollected (platform admins list it).
   */
  async function refund(tx: Database, charge: StripeCharge, event: EventMeta): Promise<void> {
    const order = await orderOfPayment(tx, charge);
    if (!order) return notYetFulfilled(event);
    if (order.status === 'disputed') {
      const plan = refundDuringDisputePlan(stripeOrder(order), charge.amount_refunded);
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
    const plan = refundPlan(stripeOrder(order), charge.amount_refunded, await lockedBalance(tx, order.userId));
    await takeBack(tx, order, plan.take, 'the payment was refunded');
    await recordRefund(tx, order.id, {
      amountRefunded: charge.amount_refunded,
      coinsReversed: plan.target,
      uncollectedAdded: plan.uncollected,
      fullyRefunded: plan.fullyRefunded,
    });
    await refunded(tx, order, charge.amount_refunded, plan);
  }

  /** A dispute opened: every coin the order still grants is taken back, never below zero. */
  async function disputeOpened(tx: Database, dispute: StripeDispute, event: EventMeta): Promise<void> {
    // An inquiry or early warning withdraws no money; it closes as `warning_closed`.
    if (dispute.status.startsWith('warning_')) return;
    const order = await orderOfPayment(tx, dispute);
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
    await takeBack(tx, order, plan.take, 'the payment is disputed');
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
  async function disputeClosed(tx: Database, dispute: StripeDispute): Promise<void> {
    const order = await orderOfPayment(tx, dispute);
    if (order?.status !== 'disputed' || dispute.status !== 'won') return;
    const plan = disputeReturnPlan(order.disputeTaken, await lockedBalance(tx, order.userId), MAX_BALANCE);
    if (plan.returned > 0) {
      await wallets.credit(tx, {
        userId: order.userId,
        amount: plan.returned,
        kind: 'adjustment',
        reference: order.id,
        reason: 'the dispute was won: coins returned',
      });
    }
    if (plan.blocked > 0)
      log.error(
        { orderId: order.id, blocked: plan.blocked },
        'a won dispute could not return every coin (the wallet is full): the order needs review',
      );
    await recordDispute(tx, order.id, {
      won: {
        status: order.amountRefunded >= stripeOrder(order).amount ? 'refunded' : 'fulfilled',
        // Coins a full wallet kept from coming back stay reversed.
        coinsReversed: order.coinsReversed - plan.returned - order.disputeUncollected,
        uncollected: order.uncollected - order.disputeUncollected,
        ...(plan.blocked > 0 ? { review: 'dispute_return_blocked' as const } : {}),
      },
    });
  }

  return { fulfil, fulfilled, refunded, refund, disputeOpened, disputeClosed };
}

export type Settlement = ReturnType<typeof createSettlement>;
