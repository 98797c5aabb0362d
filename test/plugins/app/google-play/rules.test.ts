import t from 'tap';
import {
  consumeRetryDelayMs,
  consumeTooLate,
  type ProductPurchase,
  purchaseVerdict,
  readNotification,
  readProductPurchase,
  readPush,
  readVoidedPurchase,
  storeRefOf,
  tokenHash,
  VOIDED_MAX_LOOKBACK_MS,
  VOIDED_OVERLAP_MS,
  voidedWindowStart,
} from '../../../../plugins/app/google-play/rules.js';

const purchase = (fields: Partial<ProductPurchase> = {}): ProductPurchase => ({
  purchaseState: 0,
  consumptionState: 0,
  purchaseTimeMillis: 1_700_000_000_000,
  orderId: 'GPA.1234-5678-9012-34567',
  productId: 'coins_1000',
  obfuscatedExternalAccountId: 'fan-1',
  quantity: 1,
  purchaseType: null,
  ...fields,
});

t.test('a ProductPurchase as Google answers it: int64 values as strings, absent fields defaulted', async (t) => {
  t.same(
    readProductPurchase({
      kind: 'androidpublisher#productPurchase',
      purchaseTimeMillis: '1700000000000',
      purchaseState: 0,
      consumptionState: 0,
      orderId: 'GPA.1',
      obfuscatedExternalAccountId: 'fan-1',
    }),
    { ...purchase({ orderId: 'GPA.1', productId: null }) },
  );
  t.equal(readProductPurchase({ purchaseState: 0 }), undefined, 'no purchase time: not a purchase');
  t.equal(readProductPurchase([]), undefined);
  t.equal(readProductPurchase({ purchaseTimeMillis: '12abc' }), undefined);
  t.equal(readProductPurchase({ purchaseTimeMillis: '1', purchaseState: 0, quantity: 3 })?.quantity, 3);
});

t.test('an answer without a known purchaseState or with a quantity that is no number is unreadable', async (t) => {
  const base = { purchaseTimeMillis: '1700000000000', obfuscatedExternalAccountId: 'fan-1' };
  t.equal(readProductPurchase(base), undefined, 'no purchaseState: never taken as purchased');
  for (const purchaseState of [null, '', 'purchased', 3, -1, 0.5])
    t.equal(readProductPurchase({ ...base, purchaseState }), undefined, `purchaseState ${purchaseState}`);
  for (const purchaseState of [0, 1, 2, '2'])
    t.equal(readProductPurchase({ ...base, purchaseState })?.purchaseState, Number(purchaseState));
  for (const quantity of [null, 'two', 1.5, '1e3'])
    t.equal(readProductPurchase({ ...base, purchaseState: 0, quantity }), undefined, `quantity ${quantity}`);
  t.equal(readProductPurchase({ ...base, purchaseState: 0 })?.quantity, 1, 'absent quantity: one');
});

t.test('a purchase token is logged as the first 12 hex characters of its SHA-256', async (t) => {
  t.equal(tokenHash('abc'), 'ba7816bf8f01');
  t.match(tokenHash('x'.repeat(4096)), /^[0-9a-f]{12}$/);
});

t.test('a voided purchase needs its token and time', async (t) => {
  t.match(readVoidedPurchase({ purchaseToken: 'x', voidedTimeMillis: '5', orderId: 'GPA.1' }), {
    purchaseToken: 'x',
    voidedTimeMillis: 5,
    orderId: 'GPA.1',
  });
  t.equal(readVoidedPurchase({ purchaseToken: 'x' }), undefined);
  t.equal(storeRefOf({ orderId: null }, 'tok'), 'token:tok', 'a purchase without an order id, by its token');
  t.equal(storeRefOf({ orderId: 'GPA.1' }, 'tok'), 'GPA.1');
});

t.test(
  'only a purchased purchase, made for the caller, of the product asked for, one at a time, credits',
  async (t) => {
    t.same(purchaseVerdict(purchase(), 'fan-1', 'coins_1000'), { kind: 'credit' });
    t.same(purchaseVerdict(purchase(), 'fan-2', 'coins_1000'), { kind: 'not_yours' });
    t.same(purchaseVerdict(purchase({ obfuscatedExternalAccountId: null }), 'fan-1', 'coins_1000'), {
      kind: 'not_yours',
    });
    t.same(purchaseVerdict(purchase({ purchaseState: 2 }), 'fan-1', 'coins_1000'), { kind: 'pending' });
    t.same(purchaseVerdict(purchase({ purchaseState: 1 }), 'fan-1', 'coins_1000'), { kind: 'cancelled' });
    t.same(purchaseVerdict(purchase({ purchaseState: 7 }), 'fan-1', 'coins_1000'), { kind: 'cancelled' });
    t.match(purchaseVerdict(purchase({ quantity: 2 }), 'fan-1', 'coins_1000'), { kind: 'unsupported' });
    t.match(purchaseVerdict(purchase(), 'fan-1', 'coins_5000'), { kind: 'unsupported' });
  },
);

t.test('consume retries: a minute, doubling, at most an hour; pointless after three days', async (t) => {
  t.equal(consumeRetryDelayMs(1), 60_000);
  t.equal(consumeRetryDelayMs(2), 120_000);
  t.equal(consumeRetryDelayMs(7), 3_600_000);
  t.equal(consumeRetryDelayMs(40), 3_600_000);
  const bought = new Date('2026-01-01T00:00:00Z');
  t.notOk(consumeTooLate(bought, new Date('2026-01-03T23:59:00Z')));
  t.ok(consumeTooLate(bought, new Date('2026-01-04T00:00:01Z')));
});

t.test('the voided window: from the last end less the overlap, never past 30 days back', async (t) => {
  const now = new Date('2026-06-01T00:00:00Z');
  const first = voidedWindowStart(null, now);
  t.ok(first > now.getTime() - VOIDED_MAX_LOOKBACK_MS && first < now.getTime() - VOIDED_MAX_LOOKBACK_MS + 120_000);
  const last = new Date('2026-05-31T23:00:00Z');
  t.equal(voidedWindowStart(last, now), last.getTime() - VOIDED_OVERLAP_MS);
  t.equal(voidedWindowStart(new Date('2026-01-01T00:00:00Z'), now), first, 'a run long ago reads 30 days back');
});

t.test('Pub/Sub push bodies and developer notifications', async (t) => {
  const data = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
  const oneTime = {
    packageName: 'com.example.packs',
    oneTimeProductNotification: { version: '1.0', notificationType: 1, purchaseToken: 'tok', sku: 'coins_1000' },
  };
  t.same(readPush({ message: { messageId: 'm1', data: data(oneTime) } }), {
    messageId: 'm1',
    notification: {
      kind: 'oneTimeProduct',
      notificationType: 1,
      purchaseToken: 'tok',
      sku: 'coins_1000',
      packageName: 'com.example.packs',
    },
  });
  t.equal(readPush({ message: { message_id: 'm2', data: 'not base64 json' } })?.notification, undefined);
  t.equal(readPush({ message: { data: data(oneTime) } }), undefined, 'no message id: not a push');
  t.equal(readPush(null), undefined);
  t.match(
    readNotification({
      packageName: 'p.q',
      voidedPurchaseNotification: { purchaseToken: 't', orderId: 'GPA.1', productType: 2, refundType: 1 },
    }),
    { kind: 'voided', orderId: 'GPA.1', productType: 2 },
  );
  t.same(readNotification({ packageName: 'p.q', testNotification: { version: '1.0' } }), {
    kind: 'test',
    packageName: 'p.q',
  });
  t.same(readNotification({ packageName: 'p.q', subscriptionNotification: {} }), { kind: 'other', packageName: 'p.q' });
  t.equal(readNotification({ oneTimeProductNotification: {} }), undefined, 'no package name');
  t.equal(readNotification({ packageName: 'p.q', oneTimeProductNotification: { sku: 's' } }), undefined);
});
