import type { PackStatus, PurchaseStatus } from '../../../schemas/enums.js';
import { type AppError, ConflictError, NotFoundError } from '../errors.js';
import { availablePacks } from '../packs/odds.js';

/** The rules of buying a pack, as pure functions; the service applies them under the pack's row lock. */

/** A pending purchase past its expiry is expired, whether or not the expiry job has marked it. */
export function effectiveStatus(purchase: { status: PurchaseStatus; expiresAt: Date }, now: Date): PurchaseStatus {
  return purchase.status === 'pending' && purchase.expiresAt <= now ? 'expired' : purchase.status;
}

export const packNotOnSale = (status: PackStatus) =>
  new ConflictError('pack_not_on_sale', `The pack is ${status}: only active packs are sold.`);

export const purchaseNotFound = () =>
  new NotFoundError('purchase_not_found', 'You have no purchase with this id for this pack.');

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
  /** Reservations counted against what is for sale (the kept count: live ones, and expired ones not yet reclaimed). */
  reserved: number;
  /** Reward packs given (owned like sold ones) and those promised to rewards not yet given. */
  granted: number;
  promised: number;
}

/** Packs that can still be sold: reservations, promises and owned-unopened packs hold their copies. */
export function availableFor(state: Omit<SalesState, 'status' | 'maxPerUser'>): number {
  return availablePacks({
    totalRemaining: state.remaining,
    cardsPerPack: state.cardsPerPack,
    supply: state.supply,
    sold: state.sold,
    granted: state.granted,
    opened: state.opened,
    reserved: state.reserved,
    promised: state.promised,
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
  if (availableFor(state) <= 0)
    throw new ConflictError(
      'sold_out',
      'The pack is sold out: every pack it can fill is sold, reserved, or held for rewards.',
    );
}

/** Throws the reason a purchase in this status cannot be completed (a completed one answers as before). */
export function assertCompletable(status: PurchaseStatus): void {
  if (status === 'expired') {
    throw new ConflictError(
      'purchase_expired',
      'The purchase expired before it was completed, and its pack was released; start a new one.',
    );
  }
  if (status === 'cancelled')
    throw new ConflictError('purchase_cancelled', 'The purchase was cancelled; start a new one.');
}

/** Throws the reason a purchase in this status cannot be cancelled (a cancelled one answers as before). */
export function assertCancellable(status: PurchaseStatus): void {
  if (status === 'expired')
    throw new ConflictError('purchase_expired', 'The purchase already expired; its pack was released.');
  if (status === 'completed')
    throw new ConflictError(
      'purchase_completed',
      'The purchase is completed: the pack is yours and cannot be returned.',
    );
}

/**
 * Copies the packs already sold, granted, reserved or promised need from the pool: a change that
 * leaves fewer (a smaller pool, a larger cardsPerPack) would leave some of them unfillable.
 */
export function committedCopies(state: {
  sold: number;
  granted: number;
  opened: number;
  reserved: number;
  promised: number;
  cardsPerPack: number;
}): number {
  return (state.sold + state.granted - state.opened + state.reserved + state.promised) * state.cardsPerPack;
}

/** Packs counted against the supply: sold, granted, reserved and promised. */
export const committedPacks = (state: { sold: number; granted: number; reserved: number; promised: number }) =>
  state.sold + state.granted + state.reserved + state.promised;

/**
 * A batch of starts of one pack, decided in arrival order under the pack's row lock: for each
 * request, null when it reserves a pack, or why it cannot. `held` is each user's purchases of the
 * pack that count against maxPerUser before the batch; the batch's own reservations count too, so
 * a fan's requests in one batch are held to the limit as they would be one after another.
 */
export function planStarts(
  state: SalesState,
  requests: readonly { userId: string }[],
  held: ReadonlyMap<string, number>,
): (ConflictError | null)[] {
  const holding = new Map(held);
  let reserved = state.reserved;
  return requests.map(({ userId }) => {
    const mine = holding.get(userId) ?? 0;
    try {
      assertCanReserve({ ...state, reserved }, mine);
    } catch (error) {
      return error as ConflictError;
    }
    reserved += 1;
    holding.set(userId, mine + 1);
    return null;
  });
}

/** A stored purchase as a complete sees it, with the row locked. */
export interface PurchaseToComplete {
  userId: string;
  packId: string;
  status: PurchaseStatus;
  /** Still holding its pack by the database's clock. */
  live: boolean;
  price: number;
  packStatus: PackStatus;
}

/**
 * What completing each request does, in arrival order: `sell` (debit, then own the pack), `again`
 * (completed before: answer as then), `same` (the purchase is named earlier in the batch: answer
 * as that one), or an error; `expire` too marks a pending purchase past its expiry, which holds
 * nothing, as expired. The wallet may still refuse a `sell` (insufficient_funds).
 */
export type CompletionStep =
  | { kind: 'sell' }
  | { kind: 'again' }
  | { kind: 'same'; as: number }
  | { kind: 'refuse'; error: AppError; expire: boolean };

export function planCompletions(
  requests: readonly { userId: string; packId: string; purchaseId: string }[],
  stored: ReadonlyMap<string, PurchaseToComplete>,
): CompletionStep[] {
  const first = new Map<string, number>();
  return requests.map((request, index): CompletionStep => {
    const purchase = stored.get(request.purchaseId);
    if (!purchase || purchase.userId !== request.userId || purchase.packId !== request.packId)
      return { kind: 'refuse', error: purchaseNotFound(), expire: false };
    const earlier = first.get(request.purchaseId);
    if (earlier !== undefined) return { kind: 'same', as: earlier };
    first.set(request.purchaseId, index);
    if (purchase.status === 'completed') return { kind: 'again' };
    const lapsed = purchase.status === 'pending' && !purchase.live;
    try {
      assertCompletable(lapsed ? 'expired' : purchase.status);
    } catch (error) {
      return { kind: 'refuse', error: error as AppError, expire: lapsed };
    }
    if (purchase.packStatus !== 'active')
      return { kind: 'refuse', error: packNotOnSale(purchase.packStatus), expire: false };
    return { kind: 'sell' };
  });
}
