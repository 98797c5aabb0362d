import type { StripeCharge, StripeCheckoutSession } from '../../../schemas/checkout.js';
import type { OrderReviewReason } from '../../../schemas/enums.js';

/** Pure rules of orders paid through Stripe Checkout. */

/** What fulfilment reads of a Checkout Session. */
export type PaidSession = Pick<
  StripeCheckoutSession,
  'id' | 'payment_status' | 'amount_total' | 'currency' | 'payment_intent'
>;

export interface OrderTerms {
  amount: number;
  currency: string;
}

/** A Stripe order: made at a price, so it always has an amount and a currency. */
export type StripeOrder<T extends { amount: number | null; currency: string | null }> = T & {
  amount: number;
  currency: string;
};

/** The Stripe paths read an order's amount; only store orders lack one, and Stripe never names them. */
export function stripeOrder<T extends { amount: number | null; currency: string | null; provider: string }>(
  order: T,
): StripeOrder<T> {
  if (order.provider !== 'stripe' || order.amount === null || order.currency === null)
    throw new Error(`order of ${order.provider} reached a Stripe path`);
  return order as StripeOrder<T>;
}

/** Only a session Stripe calls paid fulfils an order. */
export function isPaid(session: PaidSession): boolean {
  return session.payment_status === 'paid';
}

/** Why a paid order cannot be credited as usual: what a platform admin reads in the review list. */
export interface CreditProblem {
  reason: OrderReviewReason;
  detail: string;
}

/**
 * Why a paid session does not pay this order, if it does not: the amount and currency must be the
 * order's, and the payment must name its PaymentIntent (refunds and disputes find the order by it,
 * so coins credited without one could never be taken back).
 */
export function paymentMismatch(order: OrderTerms, session: PaidSession): CreditProblem | undefined {
  if (session.currency?.toLowerCase() !== order.currency)
    return {
      reason: 'payment_mismatch',
      detail: `paid in ${session.currency ?? 'no currency'}, the order is in ${order.currency}`,
    };
  if (session.amount_total !== order.amount)
    return {
      reason: 'payment_mismatch',
      detail: `paid ${session.amount_total ?? 'nothing'}, the order is for ${order.amount}`,
    };
  if (!paymentIntentId(session))
    return {
      reason: 'no_payment_intent',
      detail: 'paid without a PaymentIntent, so refunds and disputes could not find this order',
    };
  return undefined;
}

/** Why the coins of a paid order cannot be credited, if they cannot: a wallet holds at most `maxBalance`. */
export function creditProblem(balance: number, coins: number, maxBalance: number): CreditProblem | undefined {
  if (balance + coins <= maxBalance) return undefined;
  return {
    reason: 'balance_limit',
    detail: `the wallet holds ${balance} coins and cannot take ${coins} more (at most ${maxBalance})`,
  };
}

export function paymentIntentId(session: PaidSession): string | null {
  const intent = session.payment_intent;
  if (!intent) return null;
  return typeof intent === 'string' ? intent : intent.id;
}

/** A refund that gives back the whole charge (as paid, which may differ from the order when it did not match). */
export const isFullRefund = (charge: Pick<StripeCharge, 'amount' | 'amount_refunded' | 'refunded'>) =>
  charge.refunded === true || charge.amount_refunded >= charge.amount;

/**
 * What a refund takes back: the refunded share of the order's coins (Stripe reports the charge's
 * cumulative `amount_refunded`, so each refund event asks for the total so far), less what
 * earlier refunds already reversed; taken from the balance as far as it goes, never below zero,
 * and the rest recorded as uncollected.
 */
export function refundPlan(
  order: { coins: number; amount: number; coinsReversed: number },
  amountRefunded: number,
  balance: number,
): { target: number; take: number; uncollected: number; fullyRefunded: boolean } {
  const share = Math.min(Math.max(amountRefunded, 0), order.amount);
  const target = Math.max(order.coinsReversed, Math.floor((order.coins * share) / order.amount));
  const owed = target - order.coinsReversed;
  const take = Math.min(owed, Math.max(balance, 0));
  return { target, take, uncollected: owed - take, fullyRefunded: share >= order.amount };
}

/** A dispute takes back every coin the order still grants, as far as the balance goes. */
export function disputePlan(
  order: { coins: number; coinsReversed: number },
  balance: number,
): { target: number; take: number; uncollected: number } {
  const owed = order.coins - order.coinsReversed;
  const take = Math.min(owed, Math.max(balance, 0));
  return { target: order.coins, take, uncollected: owed - take };
}

/**
 * A refund that arrives while a dispute holds the order (Stripe may deliver a refund made before the
 * dispute after it): the dispute already reversed every coin, so the refund takes nothing more, but
 * the coins it calls for stop belonging to the dispute, so a dispute won returns only the rest.
 * The refunded share is taken first from what the dispute collected, then from what it could not.
 */
export function refundDuringDisputePlan(
  order: { coins: number; amount: number; coinsReversed: number; disputeTaken: number; disputeUncollected: number },
  amountRefunded: number,
): { disputeTaken: number; disputeUncollected: number; fullyRefunded: boolean } {
  const refundedBefore = order.coinsReversed - order.disputeTaken - order.disputeUncollected;
  const share = Math.min(Math.max(amountRefunded, 0), order.amount);
  const refundTarget = Math.max(refundedBefore, Math.floor((order.coins * share) / order.amount));
  const moved = Math.min(refundTarget - refundedBefore, order.disputeTaken + order.disputeUncollected);
  const fromTaken = Math.min(moved, order.disputeTaken);
  return {
    disputeTaken: order.disputeTaken - fromTaken,
    disputeUncollected: order.disputeUncollected - (moved - fromTaken),
    fullyRefunded: share >= order.amount,
  };
}

/**
 * A dispute won returns the coins it took, as far as the wallet can hold them; what it cannot
 * (a wallet filled meanwhile) stays reversed and the order is flagged.
 */
export function disputeReturnPlan(
  disputeTaken: number,
  balance: number,
  maxBalance: number,
): { returned: number; blocked: number } {
  const returned = Math.max(0, Math.min(disputeTaken, maxBalance - balance));
  return { returned, blocked: disputeTaken - returned };
}

/** A pending order older than this is re-checked with Stripe when read: a webhook may have been missed. */
export const RECHECK_AFTER_MS = 60_000;

/**
 * A store refund or revocation takes back every coin the order still grants (stores refund a
 * consumable whole), from the balance as far as it goes, never below zero; the rest is uncollected.
 */
export const storeReversalPlan = disputePlan;

/**
 * A store reversing its own refund (Apple's REFUND_REVERSED) gives back what the refund took (not
 * what it could not take: those coins were never lost), as far as the wallet can hold them; what a
 * full wallet keeps out stays reversed and the order is flagged for review.
 */
export function storeRestorePlan(
  order: { coinsReversed: number; uncollected: number },
  balance: number,
  maxBalance: number,
): { returned: number; coinsReversed: number } {
  const { returned, blocked } = disputeReturnPlan(order.coinsReversed - order.uncollected, balance, maxBalance);
  return { returned, coinsReversed: blocked };
}

/**
 * Whether a store's refund or reversal dated `at` is news for an order whose last one was dated
 * `last`: the store's own clock orders them, so one delivered late (after a later one) changes nothing.
 */
export function isNewerStoreEvent(last: Date | null, at: Date): boolean {
  return last === null || at.getTime() > last.getTime();
}
