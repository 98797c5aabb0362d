import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { OrderRow } from '../../../db/schema.js';
import type { AdminOrder, Order, StripeCheckoutSession, StripeEvent } from '../../../schemas/checkout.js';
import type { CheckoutConfig } from '../../../config/index.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../errors.js';
import { pageOf } from '../pagination.js';
import type { ProductsService } from '../products/service.js';
import { MAX_BALANCE } from '../wallets/rules.js';
import type { EventsService } from '../events/service.js';
import type { WalletsService } from '../wallets/service.js';
import { adminOrderNotFound, orderNotFound, unavailable } from './errors.js';
import { createEventHandlers } from './events.js';
import type { StripeGateway } from './gateway.js';
import { toAdminOrder, toOrder } from './mappers.js';
import {
  findOrder,
  fulfilReviewed,
  insertOrder,
  listAdminOrders,
  listOrders,
  type NewOrder,
  recordEvent,
  setNeedsReview,
  settlePending,
  takePendingOrders,
} from './repository.js';
import { creditProblem, RECHECK_AFTER_MS } from './rules.js';
import { createSettlement } from './settlement.js';
import { createStoreSettlement, type StoreChange, type StorePurchase, type StorePurchaseCheck } from './store.js';
import { findStoreOrder } from './store-repository.js';

/** A Checkout Session made for an order that is not stored yet. */
export interface PreparedCheckout {
  order: NewOrder;
  sessionId: string;
  url: string;
}

export interface CheckoutDeps {
  db: DatabaseHandle;
  /** Null when checkout is not configured: it answers 503. */
  gateway: StripeGateway | null;
  config: CheckoutConfig | null;
  log: FastifyBaseLogger;
  wallets: Pick<WalletsService, 'balance' | 'credit' | 'debit'>;
  events: Pick<EventsService, 'append'>;
  products: Pick<ProductsService, 'findPrice' | 'findProduct'>;
}

/**
 * Orders of coin bundles paid through Stripe Checkout. Every path that can settle an order (the
 * webhook, the re-check on read, the jobs) ends in settlement's one `fulfil`.
 */
export function createCheckoutService(deps: CheckoutDeps) {
  const { db, gateway, config, log, wallets, products } = deps;
  const settlement = createSettlement({ wallets, events: deps.events, log });
  const eventHandlers = createEventHandlers({ settlement, log });
  const store = createStoreSettlement({ settlement, wallets, log });
  /** In the caller's transaction when given (a store notification's inbox row), else in one of its own. */
  const inTransaction = <T>(tx: Database | undefined, work: (tx: Database) => Promise<T>): Promise<T> =>
    tx ? work(tx) : db.transaction(work);

  /**
   * Settles a pending order from its session as Stripe has it now: paid, it is fulfilled; expired,
   * the order expires; still open past the order's expiry (`expireIfOpen`), the session is expired
   * at Stripe first, and whatever Stripe then says decides. Answers whether the order changed.
   */
  async function reconcile(order: OrderRow, options: { expireIfOpen: boolean }): Promise<boolean> {
    if (!gateway || !order.providerRef) return false;
    let session = await gateway.retrieveSession(order.providerRef);
    if (session.status === 'open' && options.expireIfOpen) {
      try {
        session = await gateway.expireSession(order.providerRef);
      } catch {
        // Paid or expired in the meantime: read it again.
        session = await gateway.retrieveSession(order.providerRef);
      }
    }
    return settleFromSession(order.id, session);
  }

  /**
   * Applies a Checkout Session as Stripe has it now to its order, under the order's row lock:
   * expired, a pending order expires; otherwise `fulfil` decides. Answers whether the order changed.
   */
  function settleFromSession(orderId: string, session: StripeCheckoutSession): Promise<boolean> {
    return db.transaction(async (tx) => {
      const locked = await findOrder(tx, orderId, { lock: true });
      if (!locked) return false;
      if (session.status === 'expired')
        return locked.status === 'pending' && (await settlePending(tx, orderId, { status: 'expired' })) !== undefined;
      const outcome = await settlement.fulfil(tx, locked, session);
      return outcome === 'fulfilled' || outcome === 'failed';
    });
  }

  /** One bounded batch of a job over pending orders; a Stripe error on one order leaves it for the next run. */
  async function reconcileBatch(which: { pastExpiry: boolean }, limit: number): Promise<number> {
    if (!gateway) return 0;
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
   * A store purchase reported before, answered from one read: the order when the caller bought it,
   * 409 `store_purchase_claimed` when another account did, undefined when it is new.
   */
  async function reportedStoreOrder(
    purchase: Pick<StorePurchase, 'provider' | 'providerRef' | 'userId'>,
  ): Promise<Order | undefined> {
    const known = await findStoreOrder(db.orm, purchase.provider, purchase.providerRef);
    return known ? toOrder(store.reported(known, purchase)) : undefined;
  }

  return {
    reportedStoreOrder,

    /**
     * A purchase a store vouches for becomes a fulfilled order with one top-up, once per store
     * reference: replayed by its buyer it answers the same order (`credited` false); by another
     * account, 409 `store_purchase_claimed`. Given a transaction, it works in it (the caller has
     * asked `reportedStoreOrder` already, or needs the order with other writes).
     */
    async fulfilStoreOrder(
      purchase: StorePurchase,
      options: { tx?: Database; check?: StorePurchaseCheck } = {},
    ): Promise<{ order: Order; credited: boolean }> {
      // A purchase reported again (the common retry) is answered from one read, outside any transaction.
      const known = options.tx ? undefined : await reportedStoreOrder(purchase);
      if (known) return { order: known, credited: false };
      return inTransaction(options.tx, async (work) => {
        const { order, credited } = await store.fulfilStoreOrder(work, purchase, options.check);
        return { order: toOrder(order), credited };
      });
    },

    /** A store refunded or revoked a purchase: its coins are taken back, never below zero (idempotent). */
    reverseStoreOrder: (change: StoreChange, tx?: Database): Promise<boolean> =>
      inTransaction(tx, async (work) => (await store.reverseStoreOrder(work, change)) !== undefined),

    /** A store reversed its refund: the coins the refund took come back (idempotent). */
    restoreStoreOrder: (change: StoreChange, tx?: Database): Promise<boolean> =>
      inTransaction(tx, async (work) => (await store.restoreStoreOrder(work, change)) !== undefined),

    /** The order of a store purchase, if it was reported (who bought it, and what it granted). */
    async storeOrder(
      provider: 'apple' | 'google',
      providerRef: string,
    ): Promise<Pick<OrderRow, 'id' | 'userId' | 'coins' | 'status'> | undefined> {
      const row = await findStoreOrder(db.orm, provider, providerRef);
      return row ? { id: row.id, userId: row.userId, coins: row.coins, status: row.status } : undefined;
    },

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
      if (!gateway || !config)
        throw new ServiceUnavailableError('checkout_unavailable', 'Checkout is not configured on this service.');
      const price = await products.findPrice(priceId);
      if (!price) throw new NotFoundError('price_not_found', 'No price with this id.');
      const product = await products.findProduct(price.productId);
      if (!price.active || !product?.active) throw new ConflictError('price_inactive', 'This price is not on sale.');
      const coins = product.coins + product.bonusCoins;
      // Refused before the fan pays: a wallet that cannot take the coins would fail the paid order.
      const full = creditProblem(await wallets.balance(db.orm, userId), coins, MAX_BALANCE);
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
      let session: { id: string; url: string | null };
      try {
        session = await gateway.createSession({
          orderId: order.id,
          productName: product.name,
          currency: price.currency,
          unitAmount: price.unitAmount,
          expiresAt: order.expiresAt,
        });
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
     * so a duplicate (or one arriving while the first is handled) changes nothing. A type without
     * a handler is recorded and ignored.
     */
    handleEvent(event: StripeEvent): Promise<void> {
      return db.transaction(async (tx) => {
        if (!(await recordEvent(tx, event.id, event.type))) return;
        await eventHandlers.get(event.type)?.(tx, event.data.object, event);
      });
    },

    /** Every order, or those whose refunds left coins uncollected, or those waiting for review, for platform admins. */
    async adminOrders(query: { limit?: number; cursor?: string; uncollected?: boolean; needsReview?: boolean }) {
      const page = await listAdminOrders(db.orm, {
        ...pageOf(query),
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
          if (!(await findOrder(tx, id))) throw adminOrderNotFound();
          throw new ConflictError(
            'order_not_creditable',
            'Only a paid order that was never credited, because the wallet was full or it was paid after it expired, can be credited; refund any other in Stripe.',
          );
        }
        await wallets.credit(tx, {
          userId: fulfilled.userId,
          amount: fulfilled.coins,
          kind: 'topup',
          reference: fulfilled.id,
          reason: 'credited after review',
          actorId,
        });
        await settlement.fulfilled(tx, fulfilled);
        return toAdminOrder(fulfilled);
      });
    },

    /** A platform admin marks an order reviewed (or back to review). */
    async reviewOrder(id: string, needsReview: boolean): Promise<AdminOrder> {
      const row = await setNeedsReview(db.orm, id, needsReview);
      if (!row) throw adminOrderNotFound();
      return toAdminOrder(row);
    },

    async orders(userId: string, query: { limit?: number; cursor?: string }) {
      const page = await listOrders(db.orm, userId, pageOf(query));
      return { items: page.items.map(toOrder), nextCursor: page.nextCursor };
    },

    /** One order; a pending one older than a minute is re-checked with Stripe first (a missed webhook costs nobody coins). */
    async order(userId: string, id: string): Promise<Order> {
      const row = await findOrder(db.orm, id, { userId });
      if (!row) throw orderNotFound();
      if (
        row.status !== 'pending' ||
        !row.providerRef ||
        !gateway ||
        Date.now() - row.createdAt.getTime() < RECHECK_AFTER_MS
      )
        return toOrder(row);
      let session: StripeCheckoutSession;
      try {
        session = await gateway.retrieveSession(row.providerRef);
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
