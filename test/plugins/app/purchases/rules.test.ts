import t from 'tap';
import type { AppError } from '../../../../plugins/app/errors.js';
import {
  assertCancellable,
  assertCanReserve,
  assertCompletable,
  availableFor,
  committedCopies,
  effectiveStatus,
  type SalesState,
} from '../../../../plugins/app/purchases/rules.js';

const codeOf = (fn: () => void): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return (error as AppError).code;
  }
};

const state = (changes: Partial<SalesState> = {}): SalesState => ({
  status: 'active',
  cardsPerPack: 5,
  supply: null,
  maxPerUser: null,
  sold: 0,
  opened: 0,
  remaining: 50,
  reserved: 0,
  ...changes,
});

t.test('a pending purchase past its expiry is expired, whatever the job did', async (t) => {
  const now = new Date('2026-11-23T10:00:00.000Z');
  t.equal(effectiveStatus({ status: 'pending', expiresAt: new Date(now.getTime() + 1) }, now), 'pending');
  t.equal(effectiveStatus({ status: 'pending', expiresAt: now }, now), 'expired', 'the expiry instant itself is expired');
  t.equal(effectiveStatus({ status: 'completed', expiresAt: new Date(0) }, now), 'completed', 'a completed purchase never expires');
  t.equal(effectiveStatus({ status: 'cancelled', expiresAt: new Date(0) }, now), 'cancelled');
});

t.test('availability counts reservations and owned-unopened packs, and the supply', async (t) => {
  t.equal(availableFor(state()), 10, '50 copies fill 10 packs of 5');
  t.equal(availableFor(state({ reserved: 3 })), 7);
  t.equal(availableFor(state({ sold: 4, opened: 1, remaining: 45 })), 6, 'an opened pack took its copies out of the pool; 3 unopened hold 15');
  t.equal(availableFor(state({ supply: 4, sold: 2, reserved: 1 })), 1, 'supply caps sold + reserved');
  t.equal(availableFor(state({ remaining: 4 })), 0, 'fewer copies than one pack');
  t.equal(availableFor(state({ reserved: 20 })), 0, 'never negative');
});

t.test('reserving: on sale, under the per-user cap, not sold out (in that order)', async (t) => {
  t.equal(codeOf(() => assertCanReserve(state(), 0)), undefined);
  t.equal(codeOf(() => assertCanReserve(state({ status: 'archived' }), 0)), 'pack_not_on_sale');
  t.equal(codeOf(() => assertCanReserve(state({ status: 'draft' }), 0)), 'pack_not_on_sale');
  t.equal(codeOf(() => assertCanReserve(state({ maxPerUser: 2 }), 1)), undefined);
  t.equal(codeOf(() => assertCanReserve(state({ maxPerUser: 2 }), 2)), 'purchase_limit_reached');
  t.equal(codeOf(() => assertCanReserve(state({ reserved: 10 }), 0)), 'sold_out');
  t.equal(codeOf(() => assertCanReserve(state({ reserved: 10, maxPerUser: 1 }), 1)), 'purchase_limit_reached', 'the cap is reported first');
});

t.test('completing and cancelling by status', async (t) => {
  t.equal(codeOf(() => assertCompletable('pending')), undefined);
  t.equal(codeOf(() => assertCompletable('expired')), 'purchase_expired');
  t.equal(codeOf(() => assertCompletable('cancelled')), 'purchase_cancelled');
  t.equal(codeOf(() => assertCancellable('pending')), undefined);
  t.equal(codeOf(() => assertCancellable('expired')), 'purchase_expired');
  t.equal(codeOf(() => assertCancellable('completed')), 'purchase_completed');
});

t.test('committed copies: what sold-unopened and reserved packs need from the pool', async (t) => {
  t.equal(committedCopies({ sold: 0, opened: 0, reserved: 0, cardsPerPack: 5 }), 0);
  t.equal(committedCopies({ sold: 3, opened: 1, reserved: 2, cardsPerPack: 5 }), 20);
});
