import { and, eq } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { orders, walletLedger } from '../../../../db/schema.js';
import type { StorePurchase } from '../../../../plugins/app/checkout/store.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, expectStatus } from '../../../support/catalog.js';
import { assertNoViolations } from '../../../support/economy.js';
import { signIn } from '../../../support/teams.js';

/**
 * Store orders (App Store, Google Play) through the checkout service: one order and one credit per
 * store reference whoever reports it how often, refunds that never go below zero, and reversals.
 */

const balanceOf = async (app: App, token: string) =>
  (await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(token) })).json().data.balance as number;
const orderOf = async (app: App, provider: 'apple' | 'google', ref: string) =>
  (
    await app.db.orm
      .select()
      .from(orders)
      .where(and(eq(orders.provider, provider), eq(orders.providerRef, ref)))
  )[0];
const entries = async (app: App, orderId: string) =>
  app.db.orm.select().from(walletLedger).where(eq(walletLedger.reference, orderId));
const spend = async (app: App, userId: string, coins: number) =>
  expectStatus(
    await app.inject({
      method: 'POST',
      url: `/api/admin/wallets/${userId}/adjustments`,
      headers: bearer(ADMIN),
      payload: { amount: -coins, reason: 'spent on packs' },
    }),
    201,
    'spend',
  );

t.test('store orders', async (t) => {
  const app = await buildTestApp(t);
  const created = await app.inject({
    method: 'POST',
    url: '/api/admin/products',
    headers: bearer(ADMIN),
    payload: { name: 'Store coins', coins: 1000, bonusCoins: 100, appleProductId: 'com.example.coins.1000' },
  });
  expectStatus(created, 201, 'a product sold in the App Store only');
  const product = created.json().data;
  t.equal(product.appleProductId, 'com.example.coins.1000');
  t.equal(product.googleProductId, null);
  const listed = (await app.inject({ method: 'GET', url: '/api/products' })).json().data;
  t.match(
    listed.find((p: { id: string }) => p.id === product.id),
    { appleProductId: 'com.example.coins.1000', prices: [] },
    'listed publicly for its SKU, without a Stripe price',
  );

  const fan = await signIn(app, 'store-fan');
  const other = await signIn(app, 'store-other');
  const purchase = (ref: string, userId = 'store-fan', provider: 'apple' | 'google' = 'apple'): StorePurchase => ({
    provider,
    providerRef: ref,
    userId,
    productId: product.id,
    coins: 1100,
    amount: provider === 'apple' ? 999 : null,
    currency: provider === 'apple' ? 'usd' : null,
    purchasedAt: new Date('2026-01-01T00:00:00Z'),
  });

  const reverse = (ref: string, at?: Date) =>
    app.checkout.reverseStoreOrder({ provider: 'apple', providerRef: ref, reason: 'refunded', ...(at ? { at } : {}) });
  const restore = (ref: string, at?: Date) =>
    app.checkout.restoreStoreOrder({ provider: 'apple', providerRef: ref, reason: 'reversed', ...(at ? { at } : {}) });

  t.test('a SKU names one product', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/admin/products',
      headers: bearer(ADMIN),
      payload: { name: 'Twin', coins: 10, appleProductId: 'com.example.coins.1000' },
    });
    t.equal(res.statusCode, 409);
    t.equal(res.json().error.code, 'store_sku_taken');
    const patch = await app.inject({
      method: 'PATCH',
      url: `/api/admin/products/${product.id}`,
      headers: bearer(ADMIN),
      payload: { googleProductId: 'coins_1000' },
    });
    expectStatus(patch, 200, 'its own SKUs may change');
    t.equal(patch.json().data.googleProductId, 'coins_1000');
    t.equal((await app.products.findByStoreSku('google', 'coins_1000'))?.id, product.id);
    t.equal(await app.products.findByStoreSku('apple', 'coins_1000'), undefined, 'per store');
    const racing = await Promise.all(
      ['Racer A', 'Racer B', 'Racer C'].map((name) =>
        app.inject({
          method: 'POST',
          url: '/api/admin/products',
          headers: bearer(ADMIN),
          payload: { name, coins: 10, googleProductId: 'coins_raced' },
        }),
      ),
    );
    t.same(
      racing.map((res) => res.statusCode).sort(),
      [201, 409, 409],
      'three admins giving one new SKU at once: one gets it, the others a 409, never a 500',
    );
    t.ok(racing.filter((res) => res.statusCode === 409).every((res) => res.json().error.code === 'store_sku_taken'));
    const bad = await app.inject({
      method: 'PATCH',
      url: `/api/admin/products/${product.id}`,
      headers: bearer(ADMIN),
      payload: { appleProductId: 'has spaces' },
    });
    t.equal(bad.statusCode, 400);
  });

  t.test('credited once, replayed by its buyer, refused to another account', async (t) => {
    const before = await balanceOf(app, fan);
    const first = await app.checkout.fulfilStoreOrder(purchase('tx-1'));
    t.equal(first.credited, true);
    t.match(first.order, { provider: 'apple', status: 'fulfilled', coins: 1100, amount: 999, priceId: null });
    t.equal(first.order.expiresAt, null);
    t.equal(await balanceOf(app, fan), before + 1100);
    const again = await app.checkout.fulfilStoreOrder(purchase('tx-1'));
    t.same(again, { order: first.order, credited: false }, 'the same order');
    await t.rejects(app.checkout.fulfilStoreOrder(purchase('tx-1', 'store-other')), {
      statusCode: 409,
      code: 'store_purchase_claimed',
    });
    t.equal(await balanceOf(app, other), 0);
    t.equal(await balanceOf(app, fan), before + 1100, 'one credit');
    // The same reference in another store is another purchase.
    const google = await app.checkout.fulfilStoreOrder(purchase('tx-1', 'store-fan', 'google'));
    t.equal(google.credited, true);
    t.match(google.order, { provider: 'google', amount: null, currency: null });
    await assertNoViolations(t, app);
  });

  t.test('the same purchase reported by ten requests at once, from two accounts: one order, one credit', async (t) => {
    const before = await balanceOf(app, fan);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        app.checkout.fulfilStoreOrder(purchase('tx-race', i % 2 === 0 ? 'store-fan' : 'store-other')),
      ),
    );
    const fulfilled = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    const refused = results.filter((r) => r.status === 'rejected');
    const winner = (await orderOf(app, 'apple', 'tx-race'))?.userId;
    t.equal(fulfilled.filter((r) => r.credited).length, 1, 'one credit');
    t.equal(fulfilled.length, 5, "the winner's five requests answer the order");
    t.equal(refused.length, 5, "the other account's are refused");
    for (const r of refused) t.match((r as PromiseRejectedResult).reason, { code: 'store_purchase_claimed' });
    t.equal((await entries(app, (await orderOf(app, 'apple', 'tx-race'))?.id as string)).length, 1);
    if (winner === 'store-fan') t.equal(await balanceOf(app, fan), before + 1100);
    await assertNoViolations(t, app);
  });

  t.test(
    'a refund after the coins were spent: never below zero, the rest uncollected; reversed, given back',
    async (t) => {
      const { order } = await app.checkout.fulfilStoreOrder(purchase('tx-refund'));
      const balance = await balanceOf(app, fan);
      await spend(app, 'store-fan', balance - 300);
      const at = new Date('2026-02-01T00:00:00Z');
      t.equal(await reverse('tx-refund', at), true);
      t.equal(await balanceOf(app, fan), 0, 'never below zero');
      t.match(await orderOf(app, 'apple', 'tx-refund'), {
        status: 'refunded',
        coinsReversed: 1100,
        uncollected: 800,
        amountRefunded: 999,
      });
      // Again (a duplicate, or a REVOKE after the REFUND): nothing more.
      await reverse('tx-refund', at);
      await reverse('tx-refund', new Date('2026-02-02T00:00:00Z'));
      t.equal(await balanceOf(app, fan), 0);
      t.match(await orderOf(app, 'apple', 'tx-refund'), { coinsReversed: 1100, uncollected: 800 });
      await assertNoViolations(t, app);

      const restoredAt = new Date('2026-02-03T00:00:00Z');
      await restore('tx-refund', restoredAt);
      t.equal(await balanceOf(app, fan), 300, 'what the refund took comes back');
      t.match(await orderOf(app, 'apple', 'tx-refund'), {
        status: 'fulfilled',
        coinsReversed: 0,
        uncollected: 0,
        amountRefunded: 0,
      });
      await restore('tx-refund', restoredAt);
      t.equal(await balanceOf(app, fan), 300, 'once');
      // The refund delivered again late (older than the reversal): nothing.
      await reverse('tx-refund', at);
      t.equal(await balanceOf(app, fan), 300);
      t.equal((await orderOf(app, 'apple', 'tx-refund'))?.status, 'fulfilled');
      t.equal(order.status, 'fulfilled');
      await assertNoViolations(t, app);
    },
  );

  t.test('a reversal that arrives before its refund wins', async (t) => {
    await app.checkout.fulfilStoreOrder(purchase('tx-early'));
    const balance = await balanceOf(app, fan);
    await restore('tx-early', new Date('2026-03-02T00:00:00Z'));
    await reverse('tx-early', new Date('2026-03-01T00:00:00Z'));
    t.equal(await balanceOf(app, fan), balance);
    t.equal((await orderOf(app, 'apple', 'tx-early'))?.status, 'fulfilled');
  });

  t.test(
    'a purchase the wallet could not take: refunded, it leaves review; the refund reversed, it is back',
    async (t) => {
      await signIn(app, 'store-full');
      const nearlyFull = [1_000_000_000, 1_000_000_000, 2_147_483_647 - 1000 - 2_000_000_000];
      for (const coins of nearlyFull) await spend(app, 'store-full', -coins);
      const { order, credited } = await app.checkout.fulfilStoreOrder(purchase('tx-full', 'store-full'));
      t.equal(credited, false);
      t.match(order, { status: 'failed' });
      t.match(await orderOf(app, 'apple', 'tx-full'), { needsReview: true, reviewReason: 'balance_limit' });
      await reverse('tx-full', new Date('2026-04-01T00:00:00Z'));
      t.match(await orderOf(app, 'apple', 'tx-full'), { status: 'failed', needsReview: false, amountRefunded: 999 });
      await restore('tx-full', new Date('2026-04-02T00:00:00Z'));
      t.match(
        await orderOf(app, 'apple', 'tx-full'),
        { status: 'failed', needsReview: true, reviewReason: 'balance_limit', amountRefunded: 0 },
        'paid again and still not credited: an admin must see it',
      );
      for (const coins of nearlyFull) await spend(app, 'store-full', coins);
      await assertNoViolations(t, app);
    },
  );

  t.test('a purchase never reported: a refund of it changes nothing', async (t) => {
    t.equal(await reverse('tx-unknown'), false);
    t.equal(await restore('tx-unknown'), false);
  });
});
