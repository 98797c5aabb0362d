import type { ResponseBodyV2DecodedPayload } from '@apple/app-store-server-library';
import type { FastifyBaseLogger } from 'fastify';
import type { Order } from '../../../schemas/checkout.js';
import type { CheckoutService } from '../checkout/service.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { AppError, NotFoundError } from '../errors.js';
import type { ProductsService } from '../products/service.js';
import type { WalletsService } from '../wallets/service.js';
import type { AppStoreApi } from './client.js';
import { appleApiUnavailable, storeUnavailable } from './errors.js';
import {
  advanceCursor,
  findConsent,
  markHistoryAttempt,
  notificationSeen,
  readHistoryProgress,
  recordNotification,
  revokedByNotification,
  saveConsent,
  saveHistoryResume,
} from './repository.js';
import {
  appAccountToken,
  appleAmount,
  consumptionAnswer,
  historyDue,
  historyWindow,
  notificationAction,
  purchaseProblem,
  purchaseQuantity,
} from './rules.js';
import type { AppleVerifier } from './verifier.js';

/** Pages of notification history one run of the job reads at most (20 notifications a page). */
const MAX_HISTORY_PAGES = 50;

interface HistoryRead {
  handled: number;
  complete: boolean;
  nextPage: string | null;
}

export interface AppStoreDeps {
  db: DatabaseHandle;
  /** Null when Apple is not configured: the endpoints answer 503 `store_unavailable`. */
  verifier: AppleVerifier | null;
  api: AppStoreApi | null;
  log: FastifyBaseLogger;
  checkout: Pick<
    CheckoutService,
    'fulfilStoreOrder' | 'reportedStoreOrder' | 'reverseStoreOrder' | 'restoreStoreOrder' | 'storeOrder'
  >;
  products: Pick<ProductsService, 'findByStoreSku'>;
  wallets: Pick<WalletsService, 'balance'>;
}

/**
 * Coins bought in the iOS app: StoreKit transactions verified with Apple's library and credited
 * once each through checkout's store orders; App Store Server Notifications (delivered, or read
 * back from the history by a job) take the coins of refunds back.
 */
export function createAppStoreService(deps: AppStoreDeps) {
  const { db, verifier, api, log, checkout, products, wallets } = deps;
  const configured = (): AppleVerifier => {
    if (!verifier) throw storeUnavailable();
    return verifier;
  };

  /**
   * Answers a CONSUMPTION_REQUEST with how much of the order's coins the fan has used, only when
   * the fan consented (no consent: nothing is sent, which is what Apple asks). A failed call is
   * thrown (503), so the notification is not recorded and Apple sends it again; a request Apple
   * refuses (4xx but 429) is final, and the notification is recorded.
   */
  async function answerConsumption(transactionId: string): Promise<void> {
    const order = await checkout.storeOrder('apple', transactionId);
    if (!order || !(await findConsent(db.orm, order.userId))) return;
    const answer = consumptionAnswer(order, await wallets.balance(db.orm, order.userId));
    if (!answer) return;
    if (!api) {
      log.warn(
        { orderId: order.id },
        'a consumption request the fan consented to, but the App Store Server API is not configured',
      );
      return;
    }
    try {
      await api.sendConsumption(transactionId, { customerConsented: true, sampleContentProvided: false, ...answer });
    } catch (error) {
      const status = (error as { httpStatusCode?: unknown }).httpStatusCode;
      if (typeof status === 'number' && status >= 400 && status < 500 && status !== 429) {
        // Apple refused this answer (past its 12-hour window, say): sending it again cannot help.
        log.warn(
          { err: error, orderId: order.id },
          'the App Store Server API refused consumption information: not retried',
        );
        return;
      }
      log.warn({ err: error, orderId: order.id }, 'the App Store Server API could not take consumption information');
      throw appleApiUnavailable();
    }
  }

  /**
   * One verified notification, handled once by its notificationUUID (stored in the transaction of
   * its effect). Answers whether it was new.
   */
  async function handle(payload: ResponseBodyV2DecodedPayload, source: 'webhook' | 'history'): Promise<boolean> {
    const uuid = payload.notificationUUID;
    if (!uuid) throw new AppError(400, 'invalid_signature', 'The notification has no notificationUUID.');
    if (await notificationSeen(db.orm, uuid)) return false;
    const signed = payload.data?.signedTransactionInfo;
    const transaction = signed ? await configured().transaction(signed) : undefined;
    const transactionId = transaction?.transactionId ?? null;
    const action = notificationAction(payload.notificationType);
    if (action === 'consumption' && transactionId) await answerConsumption(transactionId);
    const at = new Date(payload.signedDate ?? Date.now());
    return db.transaction(async (tx) => {
      const recorded = await recordNotification(tx, {
        notificationUuid: uuid,
        type: String(payload.notificationType ?? 'UNKNOWN').slice(0, 64),
        subtype: payload.subtype ? String(payload.subtype).slice(0, 64) : null,
        transactionId,
        signedAt: at,
        source,
      });
      if (!recorded || !transactionId) return recorded;
      const change = { provider: 'apple' as const, providerRef: transactionId, at };
      if (action === 'reverse')
        await checkout.reverseStoreOrder({ ...change, reason: `App Store ${String(payload.notificationType)}` }, tx);
      if (action === 'restore')
        await checkout.restoreStoreOrder({ ...change, reason: 'App Store REFUND_REVERSED' }, tx);
      return true;
    });
  }

  /**
   * Up to MAX_HISTORY_PAGES pages of one window of the history, from `token`, each notification
   * handled. `complete` is false when one could not be handled (one that never verifies is logged
   * and skipped); `nextPage` is where the window goes on, if it does.
   */
  async function readHistory(
    verifying: AppleVerifier,
    reading: AppStoreApi,
    window: { start: Date; end: Date },
    token: string | null,
  ): Promise<HistoryRead> {
    let handled = 0;
    let complete = true;
    let nextPage = token;
    for (let page = 0; page < MAX_HISTORY_PAGES; page++) {
      const response = await reading.notificationHistory(window, nextPage);
      for (const item of response.notificationHistory ?? []) {
        if (!item.signedPayload) continue;
        try {
          if (await handle(await verifying.notification(item.signedPayload), 'history')) handled += 1;
        } catch (error) {
          if ((error as AppError).statusCode === 400) {
            // Not Apple's for this app (it will never verify): reading it again would change nothing.
            log.error({ err: error }, 'a notification from the history does not verify: skipped');
            continue;
          }
          complete = false;
          log.warn({ err: error }, 'a notification from the history could not be handled; the next run retries');
        }
      }
      nextPage = response.hasMore && response.paginationToken ? response.paginationToken : null;
      if (!nextPage) break;
    }
    return { handled, complete, nextPage };
  }

  return {
    /** 503 `store_unavailable` when Apple is not configured. */
    assertConfigured: (): void => {
      configured();
    },

    /** The caller's App Store account token (what the app sets as `appAccountToken`) and consent. */
    async account(userId: string): Promise<{ appAccountToken: string; consumptionDataConsent: boolean }> {
      return { appAccountToken: appAccountToken(userId), consumptionDataConsent: await findConsent(db.orm, userId) };
    },

    async setConsent(userId: string, consented: boolean) {
      await saveConsent(db.orm, userId, consented);
      return { appAccountToken: appAccountToken(userId), consumptionDataConsent: consented };
    },

    /**
     * A StoreKit transaction the app reports: verified, checked (a consumable of a bundle we sell,
     * bought for this account, not refunded), then credited once per transactionId. 201 with the
     * order when credited now, 200 with the same order when it was before.
     */
    async purchase(userId: string, signedTransaction: string): Promise<{ order: Order; credited: boolean }> {
      const transaction = await configured().transaction(signedTransaction);
      const problem = purchaseProblem(transaction, userId);
      if (problem) throw new AppError(problem.status, problem.code, problem.message);
      const transactionId = transaction.transactionId as string;
      const revoked = () => new AppError(409, 'store_purchase_revoked', 'Apple refunded or revoked this purchase.');
      // Reported before (the app's retry): one read answers it; a refund since has marked the order.
      const known = await checkout.reportedStoreOrder({ provider: 'apple', providerRef: transactionId, userId });
      if (known?.status === 'refunded') throw revoked();
      if (known) return { order: known, credited: false };
      // A transaction signed before its refund still shows none: the notifications stored tell. Asked
      // again under the purchase's lock, so a refund handled meanwhile is seen (or sees the order).
      const notRevoked = async (on: Database) => {
        if (await revokedByNotification(on, transactionId)) throw revoked();
      };
      await notRevoked(db.orm);
      const product = await products.findByStoreSku('apple', transaction.productId as string);
      if (!product)
        throw new NotFoundError('store_product_not_found', 'No coin bundle is sold under this App Store product id.');
      const quantity = purchaseQuantity(transaction);
      const paid = appleAmount(transaction.price, transaction.currency, quantity);
      // Known not to be stored a moment ago: straight to the purchase's transaction, no second read outside it.
      return db.transaction((tx) =>
        checkout.fulfilStoreOrder(
          {
            provider: 'apple',
            providerRef: transactionId,
            userId,
            productId: product.id,
            coins: (product.coins + product.bonusCoins) * quantity,
            amount: paid?.amount ?? null,
            currency: paid?.currency ?? null,
            purchasedAt: new Date(transaction.purchaseDate ?? Date.now()),
          },
          { tx, check: notRevoked },
        ),
      );
    },

    /** An App Store Server Notification as Apple posts it: verified, then handled once. */
    async notification(signedPayload: string): Promise<void> {
      const payload = await configured().notification(signedPayload);
      await handle(payload, 'webhook');
    },

    /**
     * `recover-apple-notifications`: reads the notification history since the last window read
     * whole (a little before, for overlap; at most once per HISTORY_INTERVAL_MS, failed runs
     * included) and handles every notification not seen yet the same way. One that does not verify
     * is logged and skipped. The cursor moves only when the whole window was read; one notification
     * failing is logged and the rest go on (the window is read again next time). A window longer
     * than one run's pages goes on from its next page at the next run. Answers the notifications
     * handled.
     */
    async recoverNotifications(now = new Date()): Promise<number> {
      if (!verifier || !api) return 0;
      const progress = await readHistoryProgress(db.orm);
      // Every minute would spend Apple's rate limit on empty windows: at most one read per interval.
      if (!historyDue(progress, now)) return 0;
      await markHistoryAttempt(db.orm, now);
      const resume = progress?.resume ?? null;
      const window = resume
        ? { start: resume.start, end: resume.end }
        : historyWindow(progress?.readUntil ?? null, now);
      let read: HistoryRead;
      try {
        read = await readHistory(verifier, api, window, resume?.token ?? null);
      } catch (error) {
        // An outage, or a page token Apple no longer takes: the next run reads a window from its start.
        if (resume) await saveHistoryResume(db.orm, null);
        throw error;
      }
      if (!read.complete) {
        if (resume) await saveHistoryResume(db.orm, null);
      } else if (read.nextPage) {
        log.warn({ window }, 'the notification history window is longer than one run reads: the next run goes on');
        await saveHistoryResume(db.orm, { ...window, token: read.nextPage });
      } else {
        await advanceCursor(db.orm, window.end);
      }
      return read.handled;
    },
  };
}

export type AppStoreService = ReturnType<typeof createAppStoreService>;
