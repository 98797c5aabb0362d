import t from 'tap';
import type { AppError } from '../../../../plugins/app/errors.js';
import {
  assertCancellable,
  assertCanReserve,
  assertCompletable,
  availableFor,
  type CompletionStep,
  committedCopies,
  effectiveStatus,
  type PurchaseToComplete,
  planCompletions,
  planStarts,
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
  granted: 0,
  promised: 0,
  ...changes,
});

t.test('a pending purchase past its expiry is expired, whatever the job did', async (t) => {
  const now = new Date('2026-11-23T10:00:00.000Z');
  t.equal(effectiveStatus({ status: 'pending', expiresAt: new Date(now.getTime() + 1) }, now), 'pending');
  t.equal(
    effectiveStatus({ status: 'pending', expiresAt: now }, now),
    'expired',
    'the expiry instant itself is expired',
  );
  t.equal(
    effectiveStatus({ status: 'completed', expiresAt: new Date(0) }, now),
    'completed',
    'a completed purchase never expires',
  );
  t.equal(effectiveStatus({ status: 'cancelled', expiresAt: new Date(0) }, now), 'cancelled');
});

t.test('availability counts reservations and owned-unopened packs, and the supply', async (t) => {
  t.equal(availableFor(state()), 10, '50 copies fill 10 packs of 5');
  t.equal(availableFor(state({ reserved: 3 })), 7);
  t.equal(
    availableFor(state({ sold: 4, opened: 1, remaining: 45 })),
    6,
    'an opened pack took its copies out of the pool; 3 unopened hold 15',
  );
  t.equal(availableFor(state({ supply: 4, sold: 2, reserved: 1 })), 1, 'supply caps sold + reserved');
  t.equal(availableFor(state({ remaining: 4 })), 0, 'fewer copies than one pack');
  t.equal(availableFor(state({ reserved: 20 })), 0, 'never negative');
});

t.test('reserving: on sale, under the per-user cap, not sold out (in that order)', async (t) => {
  t.equal(
    codeOf(() => assertCanReserve(state(), 0)),
    undefined,
  );
  t.equal(
    codeOf(() => assertCanReserve(state({ status: 'archived' }), 0)),
    'pack_not_on_sale',
  );
  t.equal(
    codeOf(() => assertCanReserve(state({ status: 'draft' }), 0)),
    'pack_not_on_sale',
  );
  t.equal(
    codeOf(() => assertCanReserve(state({ maxPerUser: 2 }), 1)),
    undefined,
  );
  t.equal(
    codeOf(() => assertCanReserve(state({ maxPerUser: 2 }), 2)),
    'purchase_limit_reached',
  );
  t.equal(
    codeOf(() => assertCanReserve(state({ reserved: 10 }), 0)),
    'sold_out',
  );
  t.equal(
    codeOf(() => assertCanReserve(state({ reserved: 10, maxPerUser: 1 }), 1)),
    'purchase_limit_reached',
    'the cap is reported first',
  );
});

t.test('completing and cancelling by status', async (t) => {
  t.equal(
    codeOf(() => assertCompletable('pending')),
    undefined,
  );
  t.equal(
    codeOf(() => assertCompletable('expired')),
    'purchase_expired',
  );
  t.equal(
    codeOf(() => assertCompletable('cancelled')),
    'purchase_cancelled',
  );
  t.equal(
    codeOf(() => assertCancellable('pending')),
    undefined,
  );
  t.equal(
    codeOf(() => assertCancellable('expired')),
    'purchase_expired',
  );
  t.equal(
    codeOf(() => assertCancellable('completed')),
    'purchase_completed',
  );
});

t.test('packs granted or promised to rewards hold supply and pool like sales and reservations', async (t) => {
  t.equal(
    codeOf(() => assertCanReserve(state({ supply: 5, granted: 2, promised: 3 }), 0)),
    'sold_out',
    'supply 5: 2 granted, 3 promised',
  );
  t.equal(
    codeOf(() => assertCanReserve(state({ supply: 6, granted: 2, promised: 3 }), 0)),
    undefined,
  );
  t.equal(
    codeOf(() => assertCanReserve(state({ remaining: 25, granted: 2, promised: 3 }), 0)),
    'sold_out',
    'the pool fills 5 packs: all held for rewards',
  );
  t.equal(
    codeOf(() => assertCanReserve(state({ remaining: 25, granted: 2, opened: 1, promised: 3 }), 0)),
    undefined,
    'an opened granted pack took its copies already',
  );
});

t.test('committed copies: what sold-unopened and reserved packs need from the pool', async (t) => {
  const none = { granted: 0, promised: 0 };
  t.equal(committedCopies({ sold: 0, opened: 0, reserved: 0, cardsPerPack: 5, ...none }), 0);
  t.equal(committedCopies({ sold: 3, opened: 1, reserved: 2, cardsPerPack: 5, ...none }), 20);
  t.equal(
    committedCopies({ sold: 3, granted: 2, opened: 1, reserved: 2, promised: 1, cardsPerPack: 5 }),
    35,
    'granted and promised reward packs too',
  );
});

/** The codes planStarts answers, one per request: null for a reservation. */
const startCodes = (sales: SalesState, users: string[], held: Record<string, number> = {}) =>
  planStarts(
    sales,
    users.map((userId) => ({ userId })),
    new Map(Object.entries(held)),
  ).map((outcome) => outcome?.code ?? null);

t.test('planning starts: arrival order decides, and the batch counts its own reservations', async (t) => {
  t.same(startCodes(state(), ['ann', 'bob', 'cat']), [null, null, null], 'room for all');
  t.same(startCodes(state(), []), [], 'an empty batch');
  t.same(
    startCodes(state({ maxPerUser: 2 }), ['fan', 'fan', 'fan']),
    [null, null, 'purchase_limit_reached'],
    "one fan's three requests with maxPerUser 2: the first two reserve, the third is over the cap",
  );
  t.same(
    startCodes(state({ maxPerUser: 2 }), ['fan', 'other', 'fan', 'other', 'fan']),
    [null, null, null, null, 'purchase_limit_reached'],
    'each user counted apart, whatever the interleaving',
  );
  t.same(
    startCodes(state({ remaining: 15 }), ['a', 'b', 'c', 'd']),
    [null, null, null, 'sold_out'],
    '15 copies fill 3 packs of 5: the first 3 arrivals',
  );
  t.same(
    startCodes(state({ remaining: 15, reserved: 2 }), ['a', 'b']),
    [null, 'sold_out'],
    'reservations made before the batch hold their packs',
  );
  t.same(
    startCodes(state({ remaining: 45, sold: 4, opened: 1 }), ['a', 'b', 'c', 'd', 'e', 'f', 'g']),
    [null, null, null, null, null, null, 'sold_out'],
    '45 copies left fill 9 packs, 3 of them owned unopened: 6 for sale',
  );
});

t.test('planning starts: the supply caps sold + reserved, the batch included', async (t) => {
  t.same(startCodes(state({ supply: 3 }), ['a', 'b', 'c', 'd']), [null, null, null, 'sold_out']);
  t.same(
    startCodes(state({ supply: 5, sold: 2, reserved: 1 }), ['a', 'b', 'c']),
    [null, null, 'sold_out'],
    '2 sold and 1 reserved leave 2 of 5',
  );
  t.same(
    startCodes(state({ supply: 5, sold: 5, opened: 5 }), ['a']),
    ['sold_out'],
    'every pack of the supply sold, even with copies left',
  );
});

t.test('planning starts: a pack not on sale refuses every request', async (t) => {
  for (const status of ['draft', 'archived'] as const) {
    const plan = planStarts(
      state({ status, maxPerUser: 1 }),
      [{ userId: 'a' }, { userId: 'a' }, { userId: 'b' }],
      new Map([['b', 5]]),
    );
    t.same(
      plan.map((outcome) => outcome?.code),
      ['pack_not_on_sale', 'pack_not_on_sale', 'pack_not_on_sale'],
      `${status}: not on sale comes before the cap and the stock`,
    );
    t.match(plan[0]?.message, status, 'the message names the status');
  }
});

t.test("planning starts: each user's holdings before the batch count against maxPerUser", async (t) => {
  t.same(
    startCodes(state({ maxPerUser: 2 }), ['held-1', 'held-2', 'new', 'held-1', 'held-2'], { 'held-1': 1, 'held-2': 2 }),
    [null, 'purchase_limit_reached', null, 'purchase_limit_reached', 'purchase_limit_reached'],
  );
  t.same(startCodes(state(), ['whale'], { whale: 1000 }), [null], 'no maxPerUser: holdings do not matter');
  const held = new Map([['fan', 1]]);
  planStarts(state({ maxPerUser: 3 }), [{ userId: 'fan' }, { userId: 'fan' }], held);
  t.same([...held], [['fan', 1]], 'the map of holdings passed in is left as it was');
});

t.test(
  'planning starts: once the pack is full, the cap is still reported first, as assertCanReserve does',
  async (t) => {
    // 2 packs left; maxPerUser 2. a takes 2 (the pack is now full), b asks twice, a asks again.
    const plan = startCodes(state({ remaining: 10, maxPerUser: 2 }), ['a', 'a', 'b', 'a', 'b', 'c'], { c: 2 });
    t.same(plan, [null, null, 'sold_out', 'purchase_limit_reached', 'sold_out', 'purchase_limit_reached']);
    t.equal(plan[2], 'sold_out', 'a user under the limit gets sold_out once the batch filled the pack');
    t.equal(plan[3], 'purchase_limit_reached', 'a user at the limit gets the cap, full pack or not');
    t.equal(plan[4], 'sold_out', 'a refused request counts nothing: b is still under the limit');
    t.equal(plan[5], 'purchase_limit_reached', 'holdings before the batch: the cap first too');
    // The same answers one request at a time through assertCanReserve.
    let reserved = 0;
    const holding = new Map([['c', 2]]);
    const oneByOne = ['a', 'a', 'b', 'a', 'b', 'c'].map((userId) => {
      const code = codeOf(() =>
        assertCanReserve(state({ remaining: 10, maxPerUser: 2, reserved }), holding.get(userId) ?? 0),
      );
      if (code === undefined) {
        reserved += 1;
        holding.set(userId, (holding.get(userId) ?? 0) + 1);
      }
      return code ?? null;
    });
    t.same(plan, oneByOne, 'a batch decides as the same requests one after another would');
  },
);

const purchase = (changes: Partial<PurchaseToComplete> = {}): PurchaseToComplete => ({
  userId: 'fan',
  packId: 'pack',
  status: 'pending',
  live: true,
  price: 10,
  packStatus: 'active',
  ...changes,
});

/** Each step as a short word: its kind, the refusal's code and whether it expires, or which earlier request it answers as. */
const stepsOf = (
  requests: { userId?: string; packId?: string; purchaseId: string }[],
  stored: Record<string, PurchaseToComplete>,
) =>
  planCompletions(
    requests.map((request) => ({ userId: 'fan', packId: 'pack', ...request })),
    new Map(Object.entries(stored)),
  ).map((step: CompletionStep) =>
    step.kind === 'refuse'
      ? `${(step.error as AppError).code}${step.expire ? '+expire' : ''}`
      : step.kind === 'same'
        ? `same:${step.as}`
        : step.kind,
  );

t.test('planning completions: a pending, live purchase of an active pack sells', async (t) => {
  t.same(stepsOf([{ purchaseId: 'p1' }], { p1: purchase() }), ['sell']);
  t.same(
    stepsOf([{ purchaseId: 'p1' }, { purchaseId: 'p2', userId: 'other' }], {
      p1: purchase(),
      p2: purchase({ userId: 'other' }),
    }),
    ['sell', 'sell'],
  );
  t.same(stepsOf([], {}), []);
});

t.test("planning completions: an unknown purchase, another user's or another pack's, is not found", async (t) => {
  const stored = {
    mine: purchase(),
    theirs: purchase({ userId: 'other' }),
    elsewhere: purchase({ packId: 'other-pack' }),
  };
  t.same(
    stepsOf(
      [{ purchaseId: 'nope' }, { purchaseId: 'theirs' }, { purchaseId: 'elsewhere' }, { purchaseId: 'mine' }],
      stored,
    ),
    ['purchase_not_found', 'purchase_not_found', 'purchase_not_found', 'sell'],
  );
  const [refusal] = planCompletions(
    [{ userId: 'fan', packId: 'pack', purchaseId: 'theirs' }],
    new Map(Object.entries(stored)),
  );
  t.has(
    refusal,
    { kind: 'refuse', expire: false, error: { statusCode: 404, code: 'purchase_not_found' } },
    'a 404, never expiring anything',
  );
  // Another user naming the purchase first does not make the owner's request a repeat of it.
  t.same(stepsOf([{ purchaseId: 'mine', userId: 'thief' }, { purchaseId: 'mine' }], stored), [
    'purchase_not_found',
    'sell',
  ]);
});

t.test('planning completions: a purchase named twice answers as its first request', async (t) => {
  t.same(
    stepsOf([{ purchaseId: 'p1' }, { purchaseId: 'p2' }, { purchaseId: 'p1' }], { p1: purchase(), p2: purchase() }),
    ['sell', 'sell', 'same:0'],
  );
  t.same(
    stepsOf([{ purchaseId: 'p1' }, { purchaseId: 'p1' }, { purchaseId: 'p1' }], { p1: purchase() }),
    ['sell', 'same:0', 'same:0'],
    'sold once',
  );
  t.same(
    stepsOf([{ purchaseId: 'x' }, { purchaseId: 'p1' }, { purchaseId: 'p1' }], {
      p1: purchase({ status: 'cancelled' }),
    }),
    ['purchase_not_found', 'purchase_cancelled', 'same:1'],
    'a refused one too: `same` points at the first request that named it',
  );
  t.same(
    stepsOf([{ purchaseId: 'p1' }, { purchaseId: 'p1' }], { p1: purchase({ live: false }) }),
    ['purchase_expired+expire', 'same:0'],
    'expired once, not twice',
  );
});

t.test('planning completions: by status', async (t) => {
  t.same(
    stepsOf([{ purchaseId: 'p' }], { p: purchase({ status: 'completed', live: false }) }),
    ['again'],
    'completed: answer as then',
  );
  t.same(
    stepsOf([{ purchaseId: 'p' }], { p: purchase({ status: 'completed', packStatus: 'archived' }) }),
    ['again'],
    'even once the pack left sale',
  );
  t.same(stepsOf([{ purchaseId: 'p' }], { p: purchase({ status: 'cancelled' }) }), ['purchase_cancelled']);
  t.same(
    stepsOf([{ purchaseId: 'p' }], { p: purchase({ live: false }) }),
    ['purchase_expired+expire'],
    'pending past its expiry: refused, marked expired',
  );
  t.same(
    stepsOf([{ purchaseId: 'p' }], { p: purchase({ status: 'expired', live: false }) }),
    ['purchase_expired'],
    'already marked: nothing to mark',
  );
  t.same(
    stepsOf([{ purchaseId: 'p' }], { p: purchase({ status: 'expired', live: true }) }),
    ['purchase_expired'],
    'the stored status wins over live',
  );
  t.same(stepsOf([{ purchaseId: 'p' }], { p: purchase({ packStatus: 'archived' }) }), ['pack_not_on_sale']);
  t.same(stepsOf([{ purchaseId: 'p' }], { p: purchase({ packStatus: 'draft' }) }), ['pack_not_on_sale']);
  t.same(
    stepsOf([{ purchaseId: 'p' }], { p: purchase({ live: false, packStatus: 'archived' }) }),
    ['purchase_expired+expire'],
    'a lapsed purchase of an archived pack: expired (and marked) before not on sale',
  );
  t.same(stepsOf([{ purchaseId: 'p' }], { p: purchase({ status: 'cancelled', packStatus: 'archived' }) }), [
    'purchase_cancelled',
  ]);
  const [steps] = planCompletions(
    [{ userId: 'fan', packId: 'pack', purchaseId: 'p' }],
    new Map([['p', purchase({ packStatus: 'archived' })]]),
  );
  t.has(steps, { kind: 'refuse', expire: false, error: { statusCode: 409, code: 'pack_not_on_sale' } });
});
