import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { OrderRow } from '../../../db/schema.js';
import type { Database } from '../database/index.js';
import { ConflictError } from '../errors.js';
import { MAX_BALANCE } from '../wallets/rules.js';
import type { WalletsService } from '../wallets/service.js';
import {
  findStoreOrder,
  insertStoreOrder,
  lockStorePurchase,
  markStoreEvent,
  recordStoreChange,
  recordStoreUncreditedChange,
} from './store-repository.js';
import { creditProblem, isNewerStoreEvent, storeRestorePlan, storeReversalPlan } from './rules.js';
import type { Settlement } from './settlement.js';

export type StoreProvider = 'apple' | 'google';

/** A purchase a store vouches for (the store's own signature or API already checked by the caller). */
export interface StorePurchase {
  provider: StoreProvider;
  /** Apple's `transactionId`, Google's `orderId`: one order each. */
  providerRef: string;
  userId: string;
  productId: string;
  coins: number;
  /** In minor units of `currency`; both null when the store does not say what was paid. */
  amount: number | null;
  currency: string | null;
  purchasedAt: Date;
}

/**
 * A last check of a new store purchase, in its transaction and under its lock, before the order is
 * made: it throws to refuse (say, a refund the store already announced).
 */
export type StorePurchaseCheck = (tx: Database) => Promise<void>;

/** A store's refund, revocation or reversal of one purchase; `at` is the store's time of it (default now). */
export interface StoreChange {
  provider: StoreProvider;
  providerRef: string;
  reason: string;
  at?: Date;
}

/**
 * Orders of purchases made in the App Store and Google Play, in the caller's transaction. They are
 * made settled: the store took the payment before the app reports it. Crediting is the one top-up
 * per order that `fulfil` makes (its unique reference forbids a second); a refund or revocation
 * takes the coins back like a Stripe refund, never below zero.
 */
export function createStoreSettlement(deps: {
  settlement: Pick<Settlement, 'fulfilled' | 'refunded'>;
  wallets: Pick<WalletsService, 'balance' | 'credit' | 'debit'>;
  log: FastifyBaseLogger;
}) {
  const { settlement, wallets, log } = deps;

  /**
   * Fulfils a store purchase once per store reference: the first report makes the order and credits
   * its coins; the same purchase reported again by its buyer answers that order (`credited` false);
   * reported by another account it is refused (409 `store_purchase_claimed`). A wallet that cannot
   * take the coins fails the order for a platform admin to review (the store has the money). The
   * purchase's lock is held until the caller's transaction ends, so a refund of it waits, and
   * `check` (a store's last word, such as a refund it already announced) runs under it.
   */
  async function fulfilStoreOrder(
    tx: Database,
    purchase: StorePurchase,
    check?: StorePurchaseCheck,
  ): Promise<{ order: OrderRow; credited: boolean }> {
    await lockStorePurchase(tx, purchase.provider, purchase.providerRef);
    const known = await findStoreOrder(tx, purchase.provider, purchase.providerRef);
    if (known) return { order: reported(known, purchase), credited: false };
    await check?.(tx);
    const full = creditProblem(await wallets.balance(tx, purchase.userId, { lock: true }), purchase.coins, MAX_BALANCE);
    const inserted = await insertStoreOrder(tx, {
      id: randomUUID(),
      userId: purchase.userId,
      productId: purchase.productId,
      coins: purchase.coins,
      amount: purchase.amount,
      currency: purchase.currency,
      provider: purchase.provider,
      providerRef: purchase.providerRef,
      purchasedAt: purchase.purchasedAt,
      ...(full
        ? { status: 'failed' as const, failureReason: full.detail, reviewReason: full.reason }
        : { status: 'fulfilled' as const }),
    });
    if (!inserted) {
      // Reported by another request at the same moment: it committed first.
      const existing = (await findStoreOrder(tx, purchase.provider, purchase.providerRef)) as OrderRow;
      return { order: reported(existing, purchase), credited: false };
    }
    if (full) {
      log.error(
        { orderId: inserted.id, detail: full.detail },
        'a store purchase cannot be credited: the order needs review',
      );
      return { order: inserted, credited: false };
    }
    await wallets.credit(tx, {
      userId: inserted.userId,
      amount: inserted.coins,
      kind: 'topup',
      reference: inserted.id,
    });
    await settlement.fulfilled(tx, inserted);
    return { order: inserted, credited: true };
  }

  /** A purchase already stored, reported again: its buyer gets the order; another account, 409. */
  function reported(existing: OrderRow, purchase: Pick<StorePurchase, 'provider' | 'userId'>): OrderRow {
    if (existing.userId === purchase.userId) return existing;
    log.warn(
      { provider: purchase.provider, orderId: existing.id, userId: purchase.userId },
      'a store purchase already credited to another account was reported again',
    );
    throw new ConflictError('store_purchase_claimed', 'This purchase was already credited to another account.');
  }

  /**
   * The order a store's change is about, locked, with the change's store time; `stale` when the
   * order has already taken a change at least as recent (duplicates and late arrivals do nothing).
   */
  async function orderForChange(tx: Database, change: StoreChange) {
    const at = change.at ?? new Date();
    await lockStorePurchase(tx, change.provider, change.providerRef);
    const order = await findStoreOrder(tx, change.provider, change.providerRef, { lock: true });
    return { order, at, stale: order !== undefined && !isNewerStoreEvent(order.storeEventAt, at) };
  }

  /**
   * A store refunded or revoked a purchase: a credited order becomes `refunded` and every coin it
   * still grants is taken back, as far as the balance goes; the rest is recorded as uncollected.
   * Idempotent: a refunded order changes no more, and a change older than the last one applied is
   * ignored. Answers the order (undefined when the purchase was never reported to this service).
   */
  async function reverseStoreOrder(tx: Database, change: StoreChange): Promise<OrderRow | undefined> {
    const { order, at, stale } = await orderForChange(tx, change);
    if (!order || stale) return order;
    if (order.status === 'failed') {
      // Never credited: nothing to take back; the refund settles its review.
      await recordStoreUncreditedChange(tx, order.id, { amountRefunded: order.amount ?? 0, needsReview: false, at });
      return order;
    }
    if (order.status !== 'fulfilled') return order;
    const plan = storeReversalPlan(order, await wallets.balance(tx, order.userId, { lock: true }));
    if (plan.take > 0)
      await wallets.debit(tx, {
        userId: order.userId,
        amount: plan.take,
        kind: 'refund',
        reference: order.id,
        reason: change.reason,
      });
    await recordStoreChange(tx, order.id, {
      status: 'refunded',
      amountRefunded: order.amount ?? 0,
      coinsReversed: plan.target,
      uncollected: order.uncollected + plan.uncollected,
      at,
    });
    await settlement.refunded(tx, order, order.amount ?? 0, plan);
    return order;
  }

  /**
   * A store reversed its refund (Apple's REFUND_REVERSED): the order is credited again, like a
   * Stripe dispute won: `refunded → fulfilled`, the coins the refund took come back and what it
   * could not take is forgiven. Idempotent like the refund: it applies only to a refunded order and
   * only when newer than the refund (so a refund delivered after its own reversal changes nothing).
   */
  async function restoreStoreOrder(tx: Database, change: StoreChange): Promise<OrderRow | undefined> {
    const { order, at, stale } = await orderForChange(tx, change);
    if (!order || stale) return order;
    if (order.status === 'failed') {
      // Never credited, and the store has the money again: back to review.
      await recordStoreUncreditedChange(tx, order.id, { amountRefunded: 0, needsReview: true, at });
      return order;
    }
    if (order.status !== 'refunded') {
      // The reversal came before its refund: remember when, so the older refund is ignored.
      await markStoreEvent(tx, order.id, at);
      return order;
    }
    const plan = storeRestorePlan(order, await wallets.balance(tx, order.userId, { lock: true }), MAX_BALANCE);
    if (plan.returned > 0)
      await wallets.credit(tx, {
        userId: order.userId,
        amount: plan.returned,
        kind: 'adjustment',
        reference: order.id,
        reason: change.reason,
      });
    if (plan.coinsReversed > 0)
      log.error(
        { orderId: order.id, blocked: plan.coinsReversed },
        'a reversed store refund could not return every coin (the wallet is full): the order needs review',
      );
    await recordStoreChange(tx, order.id, {
      status: 'fulfilled',
      amountRefunded: 0,
      coinsReversed: plan.coinsReversed,
      uncollected: 0,
      at,
      ...(plan.coinsReversed > 0 ? { review: 'dispute_return_blocked' as const } : {}),
    });
    return order;
  }

  return { fulfilStoreOrder, reported, reverseStoreOrder, restoreStoreOrder };
}
