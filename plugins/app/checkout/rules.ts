/** Pure rules of orders paid through Stripe Checkout. */

/** What fulfilment reads of a Checkout Session (Stripe's object, trimmed to what matters here). */
export interface PaidSession {
  id: string;
  payment_status?: string | null;
  amount_total?: number | null;
  currency?: string | null;
  payment_intent?: string | { id: string } | null;
}

export interface OrderTerms {
  amount: number;
  currency: string;
}

/** Only a session Stripe calls paid fulfils an order. */
export function isPaid(session: PaidSession): boolean {
  return session.payment_status === 'paid';
}

/** Why a paid session does not pay this order, if it does not: the amount and currency must be the order's. */
export function paymentMismatch(order: OrderTerms, session: PaidSession): string | undefined {
  if (session.currency?.toLowerCase() !== order.currency) return `paid in ${session.currency ?? 'no currency'}, the order is in ${order.currency}`;
  if (session.amount_total !== order.amount) return `paid ${session.amount_total ?? 'nothing'}, the order is for ${order.amount}`;
  return undefined;
}

export function paymentIntentId(session: PaidSession): string | null {
  const intent = session.payment_intent;
  if (!intent) return null;
  return typeof intent === 'string' ? intent : intent.id;
}

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
export function disputePlan(order: { coins: number; coinsReversed: number }, balance: number): { target: number; take: number; uncollected: number } {
  const owed = order.coins - order.coinsReversed;
  const take = Math.min(owed, Math.max(balance, 0));
  return { target: order.coins, take, uncollected: owed - take };
}

/** A pending order older than this is re-checked with Stripe when read: a webhook may have been missed. */
export const RECHECK_AFTER_MS = 60_000;
