import { randomBytes, randomUUID } from 'node:crypto';
import type { PurchaseStatus } from '../../../schemas/enums.js';
import type { CompletePurchaseBody, Purchase, UserPack } from '../../../schemas/purchases.js';
import { ChangedMeanwhileError, type Database, type DatabaseHandle } from '../database/index.js';
import type { AppError } from '../errors.js';
import { serverSeedHash } from '../packs/draw.js';
import { packNotFound } from '../packs/errors.js';
import type { EventsService } from '../events/service.js';
import type { WalletsService } from '../wallets/service.js';
import {
  heldByUsers,
  type LockedPurchase,
  lockPurchases,
  lockSales,
  ownedPacksOf,
  writeCancellation,
  writeCompletions,
  writeReservations,
} from './repository.js';
import {
  expirePurchases,
  reclaimAllExpired,
  reclaimExpired,
  reservedByPack,
  reservedOf,
  settleReservations,
} from './reservations-repository.js';
import { assertCancellable, effectiveStatus, planCompletions, planStarts, purchaseNotFound } from './rules.js';

/**
 * Expired reservations a start reclaims on its way (those that expired since the last start, in
 * a steady drop), and in each further round while it would refuse a fan as sold out.
 */
const RECLAIM_BATCH = 100;

type PurchaseFields = Pick<
  LockedPurchase,
  'id' | 'packId' | 'status' | 'price' | 'expiresAt' | 'serverSeedHash' | 'clientSeed' | 'createdAt' | 'completedAt'
>;

export function toPurchase(row: PurchaseFields, now: Date): Purchase {
  return {
    id: row.id,
    packId: row.packId,
    status: effectiveStatus(row, now),
    price: row.price,
    expiresAt: row.expiresAt.toISOString(),
    serverSeedHash: row.serverSeedHash,
    clientSeed: row.clientSeed,
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}

export function toUserPack(row: {
  id: string;
  packId: string;
  purchaseId: string;
  createdAt: Date;
  openedAt: Date | null;
}): UserPack {
  return {
    id: row.id,
    packId: row.packId,
    purchaseId: row.purchaseId,
    createdAt: row.createdAt.toISOString(),
    openedAt: row.openedAt?.toISOString() ?? null,
  };
}

export interface StartRequest {
  userId: string;
}

export interface CompleteRequest {
  userId: string;
  body: CompletePurchaseBody;
}

export type CompletedPurchase = { purchase: Purchase; userPack: UserPack };

/**
 * Buying a pack in two steps, for many fans at once: each batch of starts or completes of one
 * pack runs in one transaction (see idempotency's batchedChange), so a crowd on a pack takes its
 * row lock once per batch rather than once per fan, and concurrent buyers on one or several
 * instances never oversell. Each request is answered with its own result or its own error.
 */
export function createPurchasesService(options: {
  db: DatabaseHandle;
  ttlMs: number;
  wallets: Pick<WalletsService, 'applyChanges'>;
  events: Pick<EventsService, 'append'>;
}) {
  const { db } = options;
  return {
    /** Live reservations of each pack: the kept count less the expired ones not reclaimed yet. */
    reservedByPack(packIds: string[]): Promise<Map<string, number>> {
      return reservedByPack(db.orm, packIds);
    },

    reservedOf(packId: string): Promise<number> {
      return reservedOf(db.orm, packId);
    },

    /**
     * Reclaims every expired reservation of the pack, each round a short transaction of its own:
     * a change of the pack that must count live reservations exactly then finds little left.
     */
    reclaimAllExpired(packId: string): Promise<number> {
      return reclaimAllExpired(db.orm, packId);
    },

    /**
     * In the caller's transaction, which holds the pack's row lock and read its kept count
     * `kept` under it: reclaims the expired reservations and answers the live ones, exactly.
     */
    settleReservations(tx: Database, packId: string, kept: number): Promise<number> {
      return settleReservations(tx, packId, kept);
    },

    /** The expiry job: marks up to `limit` reservations past their expiry expired; answers how many. */
    expireOverdue(limit: number): Promise<number> {
      return expirePurchases(db.orm, limit);
    },

    /**
     * Reserves one pack per request for the TTL, in arrival order, and commits each to a secret
     * server seed by its hash. Under the pack's row lock, in four statements whatever the number
     * of requests: the lock, the pool's copies, the fans' holdings (when the pack has maxPerUser),
     * the reservations written with the count.
     */
    async startBatch(
      tx: Database,
      packId: string,
      requests: readonly StartRequest[],
    ): Promise<(Purchase | AppError)[]> {
      const sales = await lockSales(tx, packId);
      // Drafts are not public: the same 404 as an unknown id. Archived packs were public: 409.
      if (!sales || sales.status === 'draft') return requests.map(() => packNotFound());
      const held =
        sales.maxPerUser === null
          ? new Map<string, number>()
          : await heldByUsers(tx, packId, [...new Set(requests.map((r) => r.userId))]);
      let plan = planStarts(sales, requests, held);
      // The kept count still holds reservations past their expiry that nobody reclaimed: before
      // refusing anyone as sold out, reclaim them, a bounded round at a time.
      const soldOut = () => plan.some((outcome) => outcome?.code === 'sold_out');
      for (let reclaimed = RECLAIM_BATCH; soldOut() && reclaimed === RECLAIM_BATCH; ) {
        reclaimed = await reclaimExpired(tx, packId, RECLAIM_BATCH);
        sales.reserved -= reclaimed;
        if (reclaimed > 0) plan = planStarts(sales, requests, held);
      }
      const reservations = requests.flatMap((request, index) => {
        if (plan[index] !== null) return [];
        const serverSeed = randomBytes(32).toString('hex');
        return [
          { index, id: randomUUID(), userId: request.userId, serverSeed, serverSeedHash: serverSeedHash(serverSeed) },
        ];
      });
      const outcomes: (Purchase | AppError)[] = plan.map((refusal) => refusal as AppError);
      if (reservations.length === 0) return outcomes;
      const { createdAt, expiresAt } = await writeReservations(tx, {
        packId,
        price: sales.price,
        ttlMs: options.ttlMs,
        reservations,
        reclaimLimit: RECLAIM_BATCH,
      });
      for (const reservation of reservations) {
        outcomes[reservation.index] = toPurchase(
          {
            id: reservation.id,
            packId,
            status: 'pending',
            price: sales.price,
            expiresAt,
            serverSeedHash: reservation.serverSeedHash,
            clientSeed: null,
            createdAt,
            completedAt: null,
          },
          createdAt,
        );
      }
      return outcomes;
    },

    /**
     * Debits each price and turns each reservation into an owned, unopened pack, in one
     * transaction for the batch; one fan's insufficient_funds leaves the purchase pending and the
     * others be. Completing a completed purchase answers the same again. Four statements whatever
     * the number of requests: the purchases locked, the wallets locked and written (the wallets'
     * service), the completions written with the pack's counts, its row lock taken last (and a
     * fifth to read the owned packs of purchases another transaction completed meanwhile).
     */
    async completeBatch(
      tx: Database,
      packId: string,
      requests: readonly CompleteRequest[],
    ): Promise<(CompletedPurchase | AppError)[]> {
      const stored = await lockPurchases(tx, [...new Set(requests.map((request) => request.body.purchaseId))]);
      const steps = planCompletions(
        requests.map((request) => ({ userId: request.userId, packId, purchaseId: request.body.purchaseId })),
        stored,
      );
      const now = new Date();
      const selling = steps.flatMap((step, index) => (step.kind === 'sell' ? [index] : []));
      const purchaseOf = (index: number) =>
        stored.get((requests[index] as CompleteRequest).body.purchaseId) as LockedPurchase;
      const paid = selling.filter((index) => purchaseOf(index).price > 0);
      const debits = await options.wallets.applyChanges(
        tx,
        paid.map((index) => ({
          userId: purchaseOf(index).userId,
          amount: -purchaseOf(index).price,
          kind: 'purchase' as const,
          reference: purchaseOf(index).id,
        })),
        now,
      );
      const refusedByWallet = new Map(
        paid.flatMap((index, i) => (debits[i] instanceof Error ? [[index, debits[i] as AppError] as const] : [])),
      );

      // Completed meanwhile by a transaction this one waited for: its owned pack is read anew.
      const completedMeanwhile = steps.flatMap((step, index) =>
        step.kind === 'again' && !purchaseOf(index).userPack ? [purchaseOf(index).id] : [],
      );
      if (completedMeanwhile.length > 0) {
        for (const [purchaseId, owned] of await ownedPacksOf(tx, completedMeanwhile))
          (stored.get(purchaseId) as LockedPurchase).userPack = owned;
      }

      const outcomes: (CompletedPurchase | AppError)[] = new Array(requests.length);
      const completions = [];
      for (const [index, step] of steps.entries()) {
        const request = requests[index] as CompleteRequest;
        if (step.kind === 'refuse') outcomes[index] = step.error;
        else if (step.kind === 'again') {
          const purchase = purchaseOf(index);
          const owned = purchase.userPack;
          if (!owned) throw new Error(`completed purchase ${purchase.id} has no owned pack`);
          outcomes[index] = {
            purchase: toPurchase(purchase, now),
            userPack: toUserPack({ ...owned, packId, purchaseId: purchase.id }),
          };
        } else if (step.kind === 'sell') {
          const refused = refusedByWallet.get(index);
          if (refused) {
            outcomes[index] = refused;
            continue;
          }
          const purchase = purchaseOf(index);
          const clientSeed = request.body.clientSeed ?? null;
          const userPackId = randomUUID();
          completions.push({ purchaseId: purchase.id, userId: request.userId, clientSeed, userPackId });
          outcomes[index] = {
            purchase: toPurchase({ ...purchase, status: 'completed', completedAt: now, clientSeed }, now),
            userPack: toUserPack({ id: userPackId, packId, purchaseId: purchase.id, createdAt: now, openedAt: null }),
          };
        }
      }
      // A purchase named twice answers as its first request did.
      for (const [index, step] of steps.entries())
        if (step.kind === 'same') outcomes[index] = outcomes[step.as] as CompletedPurchase | AppError;

      const lapsed = steps.flatMap((step, index) =>
        step.kind === 'refuse' && step.expire ? [purchaseOf(index).id] : [],
      );
      if (completions.length > 0 || lapsed.length > 0) {
        // The pack was archived after the purchases were read: the batch is undone and run again,
        // and finds the pack not on sale.
        const pack = await writeCompletions(tx, { packId, at: now, completions, lapsed });
        if (!pack)
          throw new ChangedMeanwhileError(`pack ${packId} left sale while a batch was completing its purchases`);
        await options.events.append(
          tx,
          ...completions.map((completion) => ({
            type: 'purchase.completed' as const,
            userId: completion.userId,
            teamId: pack.teamId,
            subject: completion.purchaseId,
            data: {
              purchaseId: completion.purchaseId,
              packId,
              price: (stored.get(completion.purchaseId) as LockedPurchase).price,
            },
          })),
        );
      }
      return outcomes;
    },

    /** Releases a pending purchase's reservation. Cancelling a cancelled purchase answers the same again. */
    async cancel(tx: Database, userId: string, packId: string, purchaseId: string): Promise<Purchase> {
      const purchase = (await lockPurchases(tx, [purchaseId])).get(purchaseId);
      if (!purchase || purchase.userId !== userId || purchase.packId !== packId) throw purchaseNotFound();
      const now = new Date();
      const status: PurchaseStatus = purchase.status === 'pending' && !purchase.live ? 'expired' : purchase.status;
      if (status === 'cancelled') return toPurchase(purchase, now);
      assertCancellable(status);
      await writeCancellation(tx, purchase, now);
      return toPurchase({ ...purchase, status: 'cancelled' }, now);
    },
  };
}

export type PurchasesService = ReturnType<typeof createPurchasesService>;
