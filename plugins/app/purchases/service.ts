import { randomBytes, randomUUID } from 'node:crypto';
import type { PurchaseRow, UserPackRow } from '../../../db/schema.js';
import type { CompletePurchaseBody, Purchase, UserPack } from '../../../schemas/purchases.js';
import type { Database } from '../db.js';
import { NotFoundError } from '../errors.js';
import { serverSeedHash } from '../packs/draw.js';
import { findPack } from '../packs/repository.js';
import { packNotFound } from '../packs/service.js';
import { appendLedgerEntry } from '../wallets/repository.js';
import {
  countSale,
  findPurchase,
  insertPurchase,
  insertUserPack,
  salesCounts,
  updatePurchase,
  userPackOfPurchase,
} from './repository.js';
import { assertCancellable, assertCanReserve, assertCompletable, effectiveStatus, packNotOnSale } from './rules.js';

const purchaseNotFound = () => new NotFoundError('purchase_not_found', 'You have no purchase with this id for this pack.');

export function toPurchase(row: PurchaseRow, now: Date): Purchase {
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

export function toUserPack(row: UserPackRow): UserPack {
  return {
    id: row.id,
    packId: row.packId,
    purchaseId: row.purchaseId,
    createdAt: row.createdAt.toISOString(),
    openedAt: row.openedAt?.toISOString() ?? null,
  };
}

/**
 * Buying a pack in two steps. Every step runs in the caller's transaction and takes the pack's
 * row lock before it counts, so concurrent buyers on one or several instances never oversell.
 */
export function createPurchasesService(options: { ttlMs: number }) {
  return {
    /** Reserves one pack for the TTL and commits to the secret server seed by its hash. */
    async start(tx: Database, userId: string, packId: string): Promise<Purchase> {
      const assertOnSale = async (lock: boolean) => {
        const pack = await findPack(tx, packId, { lock });
        // Drafts are not public: the same 404 as an unknown id. Archived packs were public: 409.
        if (!pack || pack.status === 'draft') throw packNotFound();
        // Counted by the database's clock once the lock is held: a reservation that expired while
        // this one waited is free.
        const counts = await salesCounts(tx, packId, userId);
        assertCanReserve({ ...pack, ...counts }, counts.held);
        return pack;
      };
      // A look without the lock first: at a sold-out drop, the many who came too late are answered
      // at once instead of queueing on the pack's row lock. Then the check that counts, under it.
      await assertOnSale(false);
      const pack = await assertOnSale(true);
      const serverSeed = randomBytes(32).toString('hex');
      const purchase = await insertPurchase(tx, {
        id: randomUUID(),
        userId,
        packId,
        status: 'pending',
        price: pack.price,
        serverSeed,
        serverSeedHash: serverSeedHash(serverSeed),
      }, options.ttlMs);
      return toPurchase(purchase, purchase.createdAt);
    },

    /**
     * Debits the price and turns the reservation into an owned, unopened pack, in one
     * transaction. Completing a completed purchase answers the same again.
     */
    async complete(tx: Database, userId: string, packId: string, body: CompletePurchaseBody): Promise<{ purchase: Purchase; userPack: UserPack }> {
      const purchase = await findPurchase(tx, { id: body.purchaseId, userId, packId }, { lock: true });
      if (!purchase) throw purchaseNotFound();
      const now = new Date();
      if (purchase.status === 'completed') {
        const owned = await userPackOfPurchase(tx, purchase.id);
        if (!owned) throw new Error(`completed purchase ${purchase.id} has no owned pack`);
        return { purchase: toPurchase(purchase, now), userPack: toUserPack(owned) };
      }
      assertCompletable(effectiveStatus(purchase, now));
      if (purchase.price > 0) {
        await appendLedgerEntry(tx, { userId, amount: -purchase.price, kind: 'purchase', reference: purchase.id }, now);
      }
      const completed = await updatePurchase(tx, purchase.id, { status: 'completed', completedAt: now, clientSeed: body.clientSeed ?? null });
      const userPack = await insertUserPack(tx, { id: randomUUID(), userId, packId, purchaseId: purchase.id, createdAt: now });
      // Last, so the pack's row lock (which every sale and open of the pack waits for) is held the shortest time.
      // Under the pack's lock, by the database's clock: once past its expiry the reservation no longer
      // held the pack, and a start may have sold it to someone else (the throw undoes the debit).
      const sale = await countSale(tx, packId, purchase.id);
      if (sale === undefined) throw packNotFound();
      if (sale === 'expired') assertCompletable('expired');
      else if (sale !== 'sold') throw packNotOnSale(sale);
      return { purchase: toPurchase(completed, now), userPack: toUserPack(userPack) };
    },

    /** Releases a pending purchase's reservation. Cancelling a cancelled purchase answers the same again. */
    async cancel(tx: Database, userId: string, packId: string, purchaseId: string): Promise<Purchase> {
      const purchase = await findPurchase(tx, { id: purchaseId, userId, packId }, { lock: true });
      if (!purchase) throw purchaseNotFound();
      const now = new Date();
      const status = effectiveStatus(purchase, now);
      if (status === 'cancelled') return toPurchase(purchase, now);
      assertCancellable(status);
      return toPurchase(await updatePurchase(tx, purchase.id, { status: 'cancelled', endedAt: now }), now);
    },
  };
}

export type PurchasesService = ReturnType<typeof createPurchasesService>;
