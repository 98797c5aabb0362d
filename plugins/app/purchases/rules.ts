import type { PackStatus, PurchaseStatus } from '../../../schemas/enums.js';
import { ConflictError } from '../errors.js';
import { availablePacks } from '../packs/odds.js';

/** The rules of buying a pack, as pure functions; the service applies them under the pack's row lock. */

/** A pending purchase past its expiry is expired, whether or not the expiry job has marked it. */
export function effectiveStatus(purchase: { status: PurchaseStatus; expiresAt: Date }, now: Date): PurchaseStatus {
  return purchase.status === 'pending' && purchase.expiresAt <= now ? 'expired' : purchase.status;
}

export const packNotOnSale = (status: PackStatus) =>
  new ConflictError('pack_not_on_sale', `The pack is ${status}: only active packs are sold.`);

/** What a pack's sales stand at, under its row lock. */
export interface SalesState {
  status: PackStatus;
  cardsPerPack: number;
  supply: number | null;
  maxPerUser: number | null;
  sold: number;
  opened: number;
  /** Copies left in the pool. */
  remaining: number;
  /** Live reservations. */
  reserved: number;
}

/** Packs that can still be sold: reservations and owned-unopened packs hold their copies. */
export function availableFor(state: Omit<SalesState, 'status' | 'maxPerUser'>): number {
  return availablePacks({
    totalRemaining: state.remaining,
    cardsPerPack: state.cardsPerPack,
    supply: state.supply,
    sold: state.sold,
    soldUnopened: state.sold - state.opened,
    reserved: state.reserved,
  });
}

/** Throws the reason a user holding `held` purchases of the pack cannot reserve another. */
export function assertCanReserve(state: SalesState, held: number): void {
  if (state.status !== 'active') throw packNotOnSale(state.status);
  if (state.maxPerUser !== null && held >= state.maxPerUser) {
    throw new ConflictError(
      'purchase_limit_reached',
      `This pack allows ${state.maxPerUser} per user, counting pending and completed purchases; you hold ${held}.`,
    );
  }
  if (availableFor(state) <= 0) throw new ConflictError('sold_out', 'The pack is sold out: every pack it can fill is sold or reserved.');
}

/** Throws the reason a purchase in this status cannot be completed (a completed one answers as before). */
export function assertCompletable(status: PurchaseStatus): void {
  if (status === 'expired') {
    throw new ConflictError('purchase_expired', 'The purchase expired before it was completed, and its pack was released; start a new one.');
  }
  if (status === 'cancelled') throw new ConflictError('purchase_cancelled', 'The purchase was cancelled; start a new one.');
}

/** Throws the reason a purchase in this status cannot be cancelled (a cancelled one answers as before). */
export function assertCancellable(status: PurchaseStatus): void {
  if (status === 'expired') throw new ConflictError('purchase_expired', 'The purchase already expired; its pack was released.');
  if (status === 'completed') throw new ConflictError('purchase_completed', 'The purchase is completed: the pack is yours and cannot be returned.');
}

/**
 * Copies the packs already sold or reserved need from the pool: a change that leaves fewer
 * (a smaller pool, a larger cardsPerPack) would leave some of them unfillable.
 */
export function committedCopies(state: { sold: number; opened: number; reserved: number; cardsPerPack: number }): number {
  return (state.sold - state.opened + state.reserved) * state.cardsPerPack;
}
