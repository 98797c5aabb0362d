import t from 'tap';
import {
  appAccountToken,
  appleAmount,
  consumptionAnswer,
  consumptionPercentage,
  currencyExponent,
  HISTORY_FIRST_WINDOW_MS,
  HISTORY_INTERVAL_MS,
  HISTORY_MAX_WINDOW_MS,
  HISTORY_OVERLAP_MS,
  historyDue,
  historyWindow,
  notificationAction,
  purchaseProblem,
  purchaseQuantity,
} from '../../../../plugins/app/app-store/rules.js';

t.test("Apple's milli-unit prices become the currency's minor units", async (t) => {
  t.equal(currencyExponent('usd'), 2);
  t.equal(currencyExponent('JPY'), 0);
  t.equal(currencyExponent('KWD'), 3);
  t.same(appleAmount(4990, 'USD', 1), { amount: 499, currency: 'usd' });
  t.same(appleAmount(990, 'EUR', 3), { amount: 297, currency: 'eur' }, 'times the quantity');
  t.same(appleAmount(160_000, 'JPY', 1), { amount: 160, currency: 'jpy' });
  t.same(appleAmount(1_250, 'KWD', 1), { amount: 1250, currency: 'kwd' }, 'three decimals: milli-units already');
  t.same(appleAmount(4995, 'USD', 1), { amount: 500, currency: 'usd' }, 'a fraction of a cent rounds');
  t.equal(appleAmount(undefined, 'USD', 1), null, 'no price: unknown');
  t.equal(appleAmount(4990, undefined, 1), null);
  t.equal(appleAmount(0, 'USD', 1), null, 'a free offer: no amount');
  t.equal(appleAmount(4990, 'US', 1), null);
  t.equal(appleAmount(4.5, 'USD', 1), null);
  t.equal(appleAmount(Number.MAX_SAFE_INTEGER, 'USD', 1), null, 'out of range');
});

t.test('the account token: a UUID user id is its own, any other a stable name-based UUID', async (t) => {
  t.equal(appAccountToken('6F9619FF-8B86-4011-B42D-00C04FC964FF'), '6f9619ff-8b86-4011-b42d-00c04fc964ff');
  const token = appAccountToken('auth0|fan-1');
  t.match(token, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'version 5, RFC variant');
  t.equal(appAccountToken('auth0|fan-1'), token, 'stable');
  t.not(appAccountToken('auth0|fan-2'), token);
});

t.test('what a verified transaction must be to credit the caller', async (t) => {
  const good = {
    transactionId: '1',
    productId: 'sku',
    type: 'Consumable',
    appAccountToken: appAccountToken('fan').toUpperCase(),
  };
  t.equal(purchaseProblem(good, 'fan'), undefined, 'the token compares without case');
  t.match(purchaseProblem({ ...good, transactionId: undefined }, 'fan'), { status: 400 });
  t.match(purchaseProblem({ ...good, type: 'Auto-Renewable Subscription' }, 'fan'), {
    code: 'store_purchase_not_consumable',
  });
  t.match(purchaseProblem(good, 'someone-else'), { status: 403, code: 'store_account_mismatch' });
  t.match(purchaseProblem({ ...good, appAccountToken: undefined }, 'fan'), { status: 403 });
  t.match(purchaseProblem({ ...good, revocationDate: 1 }, 'fan'), { status: 409, code: 'store_purchase_revoked' });
  t.equal(purchaseQuantity({}), 1);
  t.equal(purchaseQuantity({ quantity: 3 }), 3);
  for (const odd of [0, -1, 1.5, 101])
    t.match(
      purchaseProblem({ ...good, quantity: odd }, 'fan'),
      { status: 400, code: 'invalid_signed_data' },
      String(odd),
    );
  t.equal(purchaseProblem({ ...good, quantity: 100 }, 'fan'), undefined);
});

t.test('consumption: coins no longer in the wallet count as used, in thousandths of a percent', async (t) => {
  t.equal(consumptionPercentage(1100, 5000), 0);
  t.equal(consumptionPercentage(1100, 550), 50_000);
  t.equal(consumptionPercentage(1100, 0), 100_000);
  t.equal(consumptionPercentage(1100, -3), 100_000);
  t.equal(consumptionPercentage(0, 0), 0);
});

t.test(
  'consumption answers: delivered with its use, undelivered for a failed order, nothing once refunded',
  async (t) => {
    t.same(consumptionAnswer({ status: 'fulfilled', coins: 1100 }, 550), {
      deliveryStatus: 'DELIVERED',
      consumptionPercentage: 50_000,
    });
    t.same(consumptionAnswer({ status: 'failed', coins: 1100 }, 0), {
      deliveryStatus: 'UNDELIVERED_OTHER',
      consumptionPercentage: 0,
    });
    t.equal(consumptionAnswer({ status: 'refunded', coins: 1100 }, 0), null);
  },
);

t.test('notification types and the history window', async (t) => {
  t.equal(notificationAction('REFUND'), 'reverse');
  t.equal(notificationAction('REVOKE'), 'reverse');
  t.equal(notificationAction('REFUND_REVERSED'), 'restore');
  t.equal(notificationAction('CONSUMPTION_REQUEST'), 'consumption');
  t.equal(notificationAction('TEST'), 'none');
  t.equal(notificationAction(undefined), 'none');
  const now = new Date('2026-06-01T00:00:00Z');
  const asked = (ago: number, resume: { start: Date; end: Date; token: string } | null = null) => ({
    readUntil: null,
    attemptedAt: new Date(now.getTime() - ago),
    resume,
  });
  t.ok(historyDue(null, now), 'a first run reads');
  t.notOk(historyDue(asked(HISTORY_INTERVAL_MS - 1), now), 'asked just now (well or not): not again yet');
  t.ok(historyDue(asked(HISTORY_INTERVAL_MS), now));
  t.ok(historyDue(asked(60_000, { start: now, end: now, token: 'p2' }), now), 'a long window goes on at once');
  t.same(historyWindow(null, now), { start: new Date(now.getTime() - HISTORY_FIRST_WINDOW_MS), end: now });
  const last = new Date('2026-05-31T23:00:00Z');
  t.same(historyWindow(last, now).start, new Date(last.getTime() - HISTORY_OVERLAP_MS), 'overlapping the last run');
  t.same(
    historyWindow(new Date('2025-01-01T00:00:00Z'), now).start,
    new Date(now.getTime() - HISTORY_MAX_WINDOW_MS),
    "within Apple's 180 days",
  );
});
