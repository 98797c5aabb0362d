import type { FastifyBaseLogger } from 'fastify';
import type { Order } from '../../../schemas/checkout.js';
import type { CheckoutService } from '../checkout/service.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { ConflictError } from '../errors.js';
import type { PlayClient } from './client.js';
import {
  PlayApiError,
  productNotFound,
  purchaseCancelled,
  purchaseNotFound,
  purchaseNotYours,
  purchaseUnsupported,
  storeUnavailable,
  toStoreError,
} from './errors.js';
import {
  abandonConsume,
  findPurchase,
  forgetOldMessages,
  markConsumed,
  markConsumeFailed,
  rememberPurchase,
  markSyncAttempt,
  setSyncedUntil,
  syncProgress,
  takeDueConsumes,
} from './repository.js';
import {
  CONSUMPTION_STATE,
  consumeRetryDelayMs,
  consumeTooLate,
  type ProductPurchase,
  PURCHASE_STATE,
  purchaseVerdict,
  storeRefOf,
  tokenHash,
  voidedWindowStart,
} from './rules.js';

/** A coin bundle as Google Play sells it: found by its Play product id. */
export interface PlayProduct {
  id: string;
  coins: number;
  bonusCoins: number;
}

/** What checkout offers store purchases: one fulfil per store reference, and its reversal. */
export type StoreOrders = Pick<CheckoutService, 'fulfilStoreOrder' | 'reverseStoreOrder'>;

export interface GooglePlayDeps {
  db: DatabaseHandle;
  /** Null when Google Play is not configured: every entry point answers 503 `store_unavailable`. */
  client: PlayClient | null;
  log: FastifyBaseLogger;
  orders: StoreOrders;
  products: { findByGoogleProductId(sku: string): Promise<PlayProduct | undefined> };
  users: { exists(db: Database, userId: string, options?: { active?: boolean }): Promise<boolean> };
}

/** What a purchase sent by the app came to. */
export interface GoogleCheckoutOutcome {
  /** `credited` now, `already_credited` before, or `pending` (not paid yet: nothing credited). */
  status: 'credited' | 'already_credited' | 'pending';
  order: Order | null;
  /** Whether the purchase is consumed at Google (false: a job tries again). */
  consumed: boolean;
}

/**
 * How long a consume under way holds its token: a token is remembered due this far ahead, and each
 * one `retry-google-consumes` takes is pushed this far, so nothing consumes it at the same time.
 */
const CONSUME_LEASE_MS = 5 * 60_000;
/** `reconcile-google-voided` reads Google at most this often (its quota is small), however often it is run. */
export const VOIDED_MIN_INTERVAL_MS = 15 * 60_000;
const VOIDED_SYNC = 'voided';

/**
 * Coins bought in the Android app. A purchase is always read from the Play Developer API (never
 * taken from the app or a notification), credited once per Google order through checkout's
 * `fulfilStoreOrder`, then consumed; refunds and chargebacks take the coins back through
 * `reverseStoreOrder`.
 */
export function createGooglePlayService(deps: GooglePlayDeps) {
  const { db, client, log, orders, products, users } = deps;
  const play = (): PlayClient => {
    if (!client) throw storeUnavailable();
    return client;
  };

  /** The purchase as Google has it: unknown to Google is null; Google failing is 503/502. */
  async function readPurchase(sku: string, purchaseToken: string): Promise<ProductPurchase | null> {
    try {
      return await play().getProductPurchase(sku, purchaseToken);
    } catch (error) {
      if (!(error instanceof PlayApiError)) throw error;
      // Google answers an unknown or malformed token with 400 or 404, and one long gone with 410.
      if (!error.auth && (error.status === 400 || error.status === 404 || error.status === 410)) return null;
      log.warn({ err: error }, 'Google Play did not answer a purchase read');
      throw toStoreError(error);
    }
  }

  /**
   * Consumes a remembered purchase, unless done: a failure is remembered and the job tries again
   * before Google's three days are up. Answers whether it is consumed.
   */
  async function consume(sku: string, purchaseToken: string, purchase?: ProductPurchase): Promise<boolean> {
    const row = await findPurchase(db.orm, purchaseToken);
    if (!row || row.consumeState === 'consumed') return true;
    if (row.consumeState === 'abandoned') return false;
    if (purchase?.consumptionState === CONSUMPTION_STATE.consumed) {
      await markConsumed(db.orm, purchaseToken);
      return true;
    }
    try {
      await play().consumeProductPurchase(sku, purchaseToken);
    } catch (error) {
      if (!(error instanceof PlayApiError)) throw error;
      // Consumed meanwhile (by a retry that was cut off)? Google's account of it decides.
      const refused = !error.auth && error.status !== null && error.status < 500;
      const now = refused ? await readPurchase(sku, purchaseToken).catch(() => null) : null;
      if (now?.consumptionState === CONSUMPTION_STATE.consumed) {
        await markConsumed(db.orm, purchaseToken);
        return true;
      }
      if (now && now.purchaseState === PURCHASE_STATE.canceled) {
        await abandonConsume(db.orm, [purchaseToken], 'Google voided the purchase');
        return false;
      }
      const attempts = row.consumeAttempts + 1;
      log.warn(
        { err: error, purchaseTokenHash: tokenHash(purchaseToken), attempts },
        'a Google Play consume failed; retry-google-consumes tries again',
      );
      await markConsumeFailed(db.orm, purchaseToken, {
        error: error.message,
        nextAt: new Date(Date.now() + consumeRetryDelayMs(attempts)),
      });
      return false;
    }
    await markConsumed(db.orm, purchaseToken);
    return true;
  }

  /** Credits a purchased purchase to `userId` (once per Google order), remembers its token, and consumes it. */
  async function credit(
    userId: string,
    product: PlayProduct,
    sku: string,
    purchaseToken: string,
    purchase: ProductPurchase,
  ): Promise<GoogleCheckoutOutcome> {
    const storeRef = storeRefOf(purchase, purchaseToken);
    const purchasedAt = new Date(purchase.purchaseTimeMillis);
    // The token is remembered with the credit, in one transaction: a crash before the consume leaves
    // it due for the job, and a voided notification finds the order through it.
    const { order, credited } = await db.transaction(async (tx) => {
      const fulfilled = await orders.fulfilStoreOrder(
        {
          provider: 'google',
          providerRef: storeRef,
          userId,
          productId: product.id,
          coins: product.coins + product.bonusCoins,
          // Google does not say what the buyer paid (only in the Play Console's reports).
          amount: null,
          currency: null,
          purchasedAt,
        },
        { tx },
      );
      if (fulfilled.order.status !== 'failed')
        await rememberPurchase(tx, { purchaseToken, sku, storeRef, userId, purchasedAt }, CONSUME_LEASE_MS);
      return fulfilled;
    });
    if (order.status === 'failed') {
      // Not consumed: Google refunds it within three days, and the voided job settles the order's review.
      throw new ConflictError(
        'balance_limit',
        'This purchase cannot be credited: your wallet cannot hold its coins. Google refunds it within three days.',
      );
    }
    let consumed = false;
    try {
      consumed = await consume(sku, purchaseToken, purchase);
    } catch (error) {
      // The coins are in: the remembered token is due for the job once its lease ends.
      log.warn(
        { err: error, purchaseTokenHash: tokenHash(purchaseToken) },
        'a Google Play consume was cut short; retry-google-consumes tries again',
      );
    }
    return { status: credited ? 'credited' : 'already_credited', order, consumed };
  }

  /** Takes back the coins of a voided purchase; no more consumes of it. Answers whether an order of ours was reversed. */
  async function reverse(storeRef: string, purchaseToken: string, reason: string, at?: Date): Promise<boolean> {
    const found = await orders.reverseStoreOrder({
      provider: 'google',
      providerRef: storeRef,
      reason,
      ...(at ? { at } : {}),
    });
    await abandonConsume(db.orm, [purchaseToken], reason);
    return found;
  }

  return {
    /**
     * `POST /api/checkout/google`: the app sends the Play product id and the purchase token it got;
     * the purchase is read from Google and credited to the caller when Google says it is purchased
     * for them.
     */
    async checkout(userId: string, sku: string, purchaseToken: string): Promise<GoogleCheckoutOutcome> {
      play();
      const product = await products.findByGoogleProductId(sku);
      if (!product) throw productNotFound();
      const purchase = await readPurchase(sku, purchaseToken);
      if (!purchase) throw purchaseNotFound();
      const verdict = purchaseVerdict(purchase, userId, sku);
      switch (verdict.kind) {
        case 'credit':
          return credit(userId, product, sku, purchaseToken, purchase);
        case 'pending':
          return { status: 'pending', order: null, consumed: false };
        case 'cancelled':
          throw purchaseCancelled();
        case 'unsupported':
          throw purchaseUnsupported(verdict.detail);
        case 'not_yours': {
          const known = await findPurchase(db.orm, purchaseToken);
          if (known && known.userId !== userId)
            throw new ConflictError('store_purchase_claimed', 'This purchase was credited to another account.');
          throw purchaseNotYours();
        }
      }
    },

    /**
     * A one-time product notification: the purchase read again from Google. Purchased, it is
     * credited to the account it names (the app set it), as the app's own call would; cancelled
     * after it was credited, its coins are taken back. Answers what happened, for the log.
     */
    async oneTimeProductChanged(sku: string, purchaseToken: string): Promise<string> {
      const purchase = await readPurchase(sku, purchaseToken);
      if (!purchase) return 'unknown to Google';
      if (purchase.purchaseState === PURCHASE_STATE.canceled) {
        const known = await findPurchase(db.orm, purchaseToken);
        if (!known) return 'cancelled, never credited';
        return (await reverse(known.storeRef, purchaseToken, 'Google cancelled the purchase'))
          ? 'cancelled: coins taken back'
          : 'cancelled';
      }
      if (purchase.purchaseState !== PURCHASE_STATE.purchased) return 'pending';
      const userId = purchase.obfuscatedExternalAccountId;
      // A deleted account is credited nothing: left unconsumed, the purchase is refunded by Google.
      if (!userId || !(await users.exists(db.orm, userId, { active: true }))) {
        log.warn(
          { purchaseTokenHash: tokenHash(purchaseToken), sku },
          'a Google Play purchase names no account of ours: left for the app to send',
        );
        return 'no account';
      }
      const product = await products.findByGoogleProductId(sku);
      if (!product) {
        log.error(
          { sku, purchaseTokenHash: tokenHash(purchaseToken) },
          'a Google Play purchase of a product id no coin bundle has: not credited',
        );
        return 'unknown product';
      }
      if (purchaseVerdict(purchase, userId, sku).kind !== 'credit') return 'not creditable';
      try {
        return (await credit(userId, product, sku, purchaseToken, purchase)).status;
      } catch (error) {
        // A refusal (a full wallet) would be refused again on every redelivery: acknowledged, logged.
        if (error instanceof ConflictError) return `refused: ${error.code}`;
        throw error;
      }
    },

    /**
     * A voided-purchase notification: checked against Google (the purchase read again must be
     * cancelled) before any coin moves; a purchase not yet shown as voided is left to
     * `reconcile-google-voided`.
     */
    async purchaseVoided(purchaseToken: string): Promise<string> {
      const known = await findPurchase(db.orm, purchaseToken);
      if (!known) return 'never credited here';
      const purchase = await readPurchase(known.sku, purchaseToken);
      if (purchase && purchase.purchaseState !== PURCHASE_STATE.canceled) return 'not voided at Google yet';
      return (await reverse(known.storeRef, purchaseToken, 'Google voided the purchase'))
        ? 'coins taken back'
        : 'no order';
    },

    /** `retry-google-consumes`: due consumes tried again; past Google's three days they are given up. */
    async retryConsumes(limit: number): Promise<number> {
      if (!client) return 0;
      const due = await takeDueConsumes(db.orm, limit, CONSUME_LEASE_MS);
      let consumed = 0;
      for (const row of due) {
        if (consumeTooLate(row.purchasedAt, new Date())) {
          log.error(
            { purchaseTokenHash: tokenHash(row.purchaseToken) },
            'a Google Play purchase was never consumed within three days',
          );
          await abandonConsume(db.orm, [row.purchaseToken], 'not consumed within three days: Google refunds it');
          continue;
        }
        try {
          if (await consume(row.sku, row.purchaseToken)) consumed += 1;
        } catch (error) {
          log.warn(
            { err: error, purchaseTokenHash: tokenHash(row.purchaseToken) },
            'a consume retry failed; the next run tries again',
          );
        }
      }
      return consumed;
    },

    /**
     * `reconcile-google-voided`: purchases Google lists as voided since the last run (less an hour
     * of overlap) have their coins taken back; each reversal happens once however often it is seen.
     * Asks Google at most every 15 minutes, failed runs included (its quota for this list is small).
     */
    async reconcileVoided(): Promise<number> {
      if (!client) return 0;
      await forgetOldMessages(db.orm);
      const { syncedUntil: last, attemptedAt } = await syncProgress(db.orm, VOIDED_SYNC);
      const now = new Date();
      if (attemptedAt && now.getTime() - attemptedAt.getTime() < VOIDED_MIN_INTERVAL_MS) return 0;
      await markSyncAttempt(db.orm, VOIDED_SYNC, now);
      let voided: Awaited<ReturnType<PlayClient['listVoidedPurchases']>>;
      try {
        voided = await client.listVoidedPurchases(voidedWindowStart(last, now), now.getTime());
      } catch (error) {
        if (error instanceof PlayApiError) throw toStoreError(error);
        throw error;
      }
      let reversed = 0;
      for (const purchase of voided) {
        const storeRef = storeRefOf(purchase, purchase.purchaseToken);
        const at = new Date(purchase.voidedTimeMillis);
        if (await reverse(storeRef, purchase.purchaseToken, 'Google voided the purchase', at)) reversed += 1;
      }
      await setSyncedUntil(db.orm, VOIDED_SYNC, now);
      return reversed;
    },
  };
}

export type GooglePlayService = ReturnType<typeof createGooglePlayService>;
