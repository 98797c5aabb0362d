import t from 'tap';
import {
  isNewerStoreEvent,
  isPaid,
  paymentIntentId,
  paymentMismatch,
  refundPlan,
  storeRestorePlan,
  storeReversalPlan,
  stripeOrder,
} from '../../../../plugins/app/checkout/rules.js';

t.test('only a paid session of the same amount and currency pays an order', async (t) => {
  const order = { amount: 999, currency: 'usd' };
  t.ok(isPaid({ id: 'cs', payment_status: 'paid' }));
  for (const status of ['unpaid', 'no_payment_required', null, undefined])
    t.notOk(isPaid({ id: 'cs', payment_status: status }), String(status));
  t.equal(paymentMismatch(order, { id: 'cs', amount_total: 999, currency: 'usd', payment_intent: 'pi_1' }), undefined);
  t.equal(
    paymentMismatch(order, { id: 'cs', amount_total: 999, currency: 'USD', payment_intent: 'pi_1' }),
    undefined,
    'currency case does not matter',
  );
  t.match(paymentMismatch(order, { id: 'cs', amount_total: 998, currency: 'usd' }), {
    reason: 'payment_mismatch',
    detail: /paid 998/,
  });
  t.match(paymentMismatch(order, { id: 'cs', amount_total: 999, currency: 'eur' }), {
    reason: 'payment_mismatch',
    detail: /eur/,
  });
  t.match(paymentMismatch(order, { id: 'cs', amount_total: null, currency: null }), { detail: /no currency/ });
  t.equal(paymentIntentId({ id: 'cs', payment_intent: 'pi_1' }), 'pi_1');
  t.equal(paymentIntentId({ id: 'cs', payment_intent: { id: 'pi_2' } }), 'pi_2');
  t.equal(paymentIntentId({ id: 'cs' }), null);
});

t.test('a refund takes back the refunded share, never below zero', async (t) => {
  const order = { coins: 1100, amount: 999, coinsReversed: 0 };
  t.same(refundPlan(order, 999, 5000), { target: 1100, take: 1100, uncollected: 0, fullyRefunded: true });
  t.same(
    refundPlan(order, 999, 100),
    { target: 1100, take: 100, uncollected: 1000, fullyRefunded: true },
    'the balance was spent',
  );
  t.same(refundPlan(order, 999, 0), { target: 1100, take: 0, uncollected: 1100, fullyRefunded: true });
  t.same(
    refundPlan(order, 500, 5000),
    { target: 550, take: 550, uncollected: 0, fullyRefunded: false },
    'rounded down',
  );
  t.same(
    refundPlan({ ...order, coinsReversed: 550 }, 999, 5000),
    { target: 1100, take: 550, uncollected: 0, fullyRefunded: true },
    'only what earlier refunds left',
  );
  t.same(
    refundPlan({ ...order, coinsReversed: 1100 }, 500, 5000),
    { target: 1100, take: 0, uncollected: 0, fullyRefunded: false },
    'a smaller total, late: nothing',
  );
  t.same(refundPlan(order, 5000, 5000).target, 1100, 'never more than the order granted');
  t.same(refundPlan(order, -1, 5000).take, 0);
  t.same(refundPlan(order, 999, -5).take, 0, 'a negative balance gives nothing');
});

t.test('a dispute takes back what the order still grants, never below zero', async (t) => {
  const { disputePlan } = await import('../../../../plugins/app/checkout/rules.js');
  t.same(disputePlan({ coins: 1100, coinsReversed: 0 }, 5000), { target: 1100, take: 1100, uncollected: 0 });
  t.same(disputePlan({ coins: 1100, coinsReversed: 0 }, 500), { target: 1100, take: 500, uncollected: 600 });
  t.same(
    disputePlan({ coins: 1100, coinsReversed: 550 }, 5000),
    { target: 1100, take: 550, uncollected: 0 },
    'after a partial refund',
  );
});

t.test(
  'a paid session without a PaymentIntent does not pay an order; a full wallet cannot take its coins',
  async (t) => {
    const { creditProblem } = await import('../../../../plugins/app/checkout/rules.js');
    t.match(
      paymentMismatch(
        { amount: 999, currency: 'usd' },
        { id: 'cs', amount_total: 999, currency: 'usd', payment_intent: null },
      ),
      { reason: 'no_payment_intent', detail: /PaymentIntent/ },
    );
    t.equal(
      paymentMismatch(
        { amount: 999, currency: 'usd' },
        { id: 'cs', amount_total: 999, currency: 'usd', payment_intent: 'pi_1' },
      ),
      undefined,
    );
    t.equal(creditProblem(0, 1100, 2_147_483_647), undefined);
    t.equal(creditProblem(2_147_483_647 - 1100, 1100, 2_147_483_647), undefined, 'exactly full');
    t.match(creditProblem(2_147_483_647 - 1099, 1100, 2_147_483_647), {
      reason: 'balance_limit',
      detail: /cannot take 1100 more/,
    });
  },
);

t.test('a refund during a dispute moves coins from the dispute to the refund, collected ones first', async (t) => {
  const { refundDuringDisputePlan } = await import('../../../../plugins/app/checkout/rules.js');
  const disputed = { coins: 1100, amount: 999, coinsReversed: 1100, disputeTaken: 1100, disputeUncollected: 0 };
  t.same(refundDuringDisputePlan(disputed, 500), { disputeTaken: 550, disputeUncollected: 0, fullyRefunded: false });
  t.same(refundDuringDisputePlan(disputed, 999), { disputeTaken: 0, disputeUncollected: 0, fullyRefunded: true });
  const spent = { ...disputed, disputeTaken: 500, disputeUncollected: 600 };
  t.same(refundDuringDisputePlan(spent, 500), { disputeTaken: 0, disputeUncollected: 550, fullyRefunded: false });
  t.same(
    refundDuringDisputePlan({ ...spent, disputeUncollected: 550, disputeTaken: 0 }, 500),
    { disputeTaken: 0, disputeUncollected: 550, fullyRefunded: false },
    'the same refund again: nothing moves',
  );
  const afterPartialRefund = {
    coins: 1100,
    amount: 999,
    coinsReversed: 1100,
    disputeTaken: 550,
    disputeUncollected: 0,
  };
  t.same(
    refundDuringDisputePlan(afterPartialRefund, 500),
    { disputeTaken: 550, disputeUncollected: 0, fullyRefunded: false },
    'a refund the dispute already left out',
  );
  t.same(refundDuringDisputePlan(afterPartialRefund, 999), {
    disputeTaken: 0,
    disputeUncollected: 0,
    fullyRefunded: true,
  });
  t.same(refundDuringDisputePlan(disputed, 5000).disputeTaken, 0, 'never more than the order');
});

t.test(
  'a full refund is judged against the charge as paid; a won dispute returns what the wallet can hold',
  async (t) => {
    const { isFullRefund, disputeReturnPlan } = await import('../../../../plugins/app/checkout/rules.js');
    t.ok(isFullRefund({ amount: 500, amount_refunded: 500 }), 'paid less than the order, refunded in full');
    t.notOk(
      isFullRefund({ amount: 1500, amount_refunded: 999 }),
      'paid more than the order, refunded the order amount only',
    );
    t.ok(isFullRefund({ amount: 1500, amount_refunded: 0, refunded: true }), "Stripe's own flag");
    t.same(disputeReturnPlan(1100, 0, 2_147_483_647), { returned: 1100, blocked: 0 });
    t.same(disputeReturnPlan(1100, 2_147_483_647 - 100, 2_147_483_647), { returned: 100, blocked: 1000 });
    t.same(disputeReturnPlan(1100, 2_147_483_647, 2_147_483_647), { returned: 0, blocked: 1100 });
  },
);

t.test(
  'a store refund takes back every coin still granted, never below zero; its reversal gives back what it took',
  async (t) => {
    t.same(storeReversalPlan({ coins: 1100, coinsReversed: 0 }, 5000), { target: 1100, take: 1100, uncollected: 0 });
    t.same(storeReversalPlan({ coins: 1100, coinsReversed: 0 }, 300), { target: 1100, take: 300, uncollected: 800 });
    t.same(storeReversalPlan({ coins: 1100, coinsReversed: 0 }, -5), { target: 1100, take: 0, uncollected: 1100 });
    t.same(storeReversalPlan({ coins: 1100, coinsReversed: 1100 }, 5000), { target: 1100, take: 0, uncollected: 0 });
    // The refund took 300 of 1,100: the reversal returns those 300 and forgives the 800 uncollected.
    t.same(storeRestorePlan({ coinsReversed: 1100, uncollected: 800 }, 0, 10_000), { returned: 300, coinsReversed: 0 });
    // A wallet that can hold only 100 more keeps 200 reversed.
    t.same(storeRestorePlan({ coinsReversed: 1100, uncollected: 800 }, 9_900, 10_000), {
      returned: 100,
      coinsReversed: 200,
    });
  },
);

t.test("store changes apply in the store's order: a late, older one is not news", async (t) => {
  const at = new Date('2026-01-02T00:00:00Z');
  t.ok(isNewerStoreEvent(null, at));
  t.ok(isNewerStoreEvent(new Date('2026-01-01T00:00:00Z'), at));
  t.notOk(isNewerStoreEvent(at, at), 'the same change again');
  t.notOk(isNewerStoreEvent(new Date('2026-01-03T00:00:00Z'), at), 'older than the last applied');
});

t.test('only Stripe orders reach the Stripe paths', async (t) => {
  t.equal(stripeOrder({ provider: 'stripe', amount: 999, currency: 'usd' }).amount, 999);
  t.throws(() => stripeOrder({ provider: 'google', amount: null, currency: null }));
  t.throws(() => stripeOrder({ provider: 'stripe', amount: null, currency: null }));
});
