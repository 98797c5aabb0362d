import t from 'tap';
import { isPaid, paymentIntentId, paymentMismatch, refundPlan } from '../../../../plugins/app/checkout/rules.js';

t.test('only a paid session of the same amount and currency pays an order', async (t) => {
  const order = { amount: 999, currency: 'usd' };
  t.ok(isPaid({ id: 'cs', payment_status: 'paid' }));
  for (const status of ['unpaid', 'no_payment_required', null, undefined]) t.notOk(isPaid({ id: 'cs', payment_status: status }), String(status));
  t.equal(paymentMismatch(order, { id: 'cs', amount_total: 999, currency: 'usd' }), undefined);
  t.equal(paymentMismatch(order, { id: 'cs', amount_total: 999, currency: 'USD' }), undefined, 'currency case does not matter');
  t.match(paymentMismatch(order, { id: 'cs', amount_total: 998, currency: 'usd' }), /paid 998/);
  t.match(paymentMismatch(order, { id: 'cs', amount_total: 999, currency: 'eur' }), /eur/);
  t.match(paymentMismatch(order, { id: 'cs', amount_total: null, currency: null }), /no currency/);
  t.equal(paymentIntentId({ id: 'cs', payment_intent: 'pi_1' }), 'pi_1');
  t.equal(paymentIntentId({ id: 'cs', payment_intent: { id: 'pi_2' } }), 'pi_2');
  t.equal(paymentIntentId({ id: 'cs' }), null);
});

t.test('a refund takes back the refunded share, never below zero', async (t) => {
  const order = { coins: 1100, amount: 999, coinsReversed: 0 };
  t.same(refundPlan(order, 999, 5000), { target: 1100, take: 1100, uncollected: 0, fullyRefunded: true });
  t.same(refundPlan(order, 999, 100), { target: 1100, take: 100, uncollected: 1000, fullyRefunded: true }, 'the balance was spent');
  t.same(refundPlan(order, 999, 0), { target: 1100, take: 0, uncollected: 1100, fullyRefunded: true });
  t.same(refundPlan(order, 500, 5000), { target: 550, take: 550, uncollected: 0, fullyRefunded: false }, 'rounded down');
  t.same(refundPlan({ ...order, coinsReversed: 550 }, 999, 5000), { target: 1100, take: 550, uncollected: 0, fullyRefunded: true }, 'only what earlier refunds left');
  t.same(refundPlan({ ...order, coinsReversed: 1100 }, 500, 5000), { target: 1100, take: 0, uncollected: 0, fullyRefunded: false }, 'a smaller total, late: nothing');
  t.same(refundPlan(order, 5000, 5000).target, 1100, 'never more than the order granted');
  t.same(refundPlan(order, -1, 5000).take, 0);
  t.same(refundPlan(order, 999, -5).take, 0, 'a negative balance gives nothing');
});

t.test('a dispute takes back what the order still grants, never below zero', async (t) => {
  const { disputePlan } = await import('../../../../plugins/app/checkout/rules.js');
  t.same(disputePlan({ coins: 1100, coinsReversed: 0 }, 5000), { target: 1100, take: 1100, uncollected: 0 });
  t.same(disputePlan({ coins: 1100, coinsReversed: 0 }, 500), { target: 1100, take: 500, uncollected: 600 });
  t.same(disputePlan({ coins: 1100, coinsReversed: 550 }, 5000), { target: 1100, take: 550, uncollected: 0 }, 'after a partial refund');
});
