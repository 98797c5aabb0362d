import { eq, sql } from 'drizzle-orm';
import t, { type Test } from 'tap';
import type { App } from '../../../../app.js';
import { googlePlayPurchases, orders, walletLedger } from '../../../../db/schema.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, expectStatus } from '../../../support/catalog.js';
import { adjust, assertNoViolations, balance, type Fan, signIn } from '../../../support/economy.js';
import { captureLogs, creditGoogle, startGooglePlayStandIn } from '../../../support/google-play.js';
import { tokenHash } from '../../../../plugins/app/google-play/rules.js';

/**
 * Coins bought in the Android app, through stand-ins for Google's OAuth endpoint and the Play
 * Developer API: credited once per Google order, only to the account the purchase was made for,
 * consumed (or retried by a job), taken back when Google voids it, and never a 500 when Google fails.
 */

const SKU = 'coins_1000';

async function setup(t: Test, env: Record<string, string> = {}) {
  const google = await startGooglePlayStandIn();
  t.teardown(() => google.close());
  const app = await buildTestApp(t, { ...google.env, ...env });
  const product = await app.inject({
    method: 'POST',
    url: '/api/admin/products',
    headers: bearer(ADMIN),
    payload: { name: '1,000 coins', coins: 1000, bonusCoins: 100, googleProductId: SKU },
  });
  expectStatus(product, 201, 'product');
  return { google, app, productId: product.json().data.id as string };
}

const credit = (app: App, fan: Fan, purchaseToken: string, sku = SKU) =>
  creditGoogle(app, fan.token, sku, purchaseToken);
const topups = async (app: App, userId: string) =>
  (await app.db.orm.select().from(walletLedger).where(eq(walletLedger.userId, userId))).filter(
    (entry) => entry.kind === 'topup',
  ).length;
const tokenRow = async (app: App, purchaseToken: string) =>
  (await app.db.orm.select().from(googlePlayPurchases).where(eq(googlePlayPurchases.purchaseToken, purchaseToken)))[0];
const runJob = (app: App, job: 'retry-google-consumes' | 'reconcile-google-voided') => app.jobs.run(job, 'request');

t.test('without Google Play configured, its endpoints answer 503 store_unavailable', async (t) => {
  const app = await buildTestApp(t);
  const fan = await signIn(app, 'fan-no-google');
  const res = await credit(app, fan, 'some-token');
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'store_unavailable');
  const hook = await app.inject({ method: 'POST', url: '/api/webhooks/google', payload: {} });
  t.equal(hook.statusCode, 503);
  t.equal(hook.json().error.code, 'store_unavailable');
  t.same(await runJob(app, 'reconcile-google-voided'), { job: 'reconcile-google-voided', processed: 0 });
});

t.test('a purchase is read from Google, credited once, consumed', async (t) => {
  const { google, app, productId } = await setup(t);
  const fan = await signIn(app, 'fan-google');
  const purchase = google.buy(SKU, fan.id);

  const res = await credit(app, fan, purchase.purchaseToken);
  expectStatus(res, 200, 'credit');
  const data = res.json().data;
  t.match(data, { status: 'credited', consumed: true, order: { provider: 'google', coins: 1100, productId } });
  t.equal(await balance(app, fan), 1100);
  t.equal(google.purchases.get(purchase.purchaseToken)?.consumptionState, 1, 'consumed at Google');
  t.match(await tokenRow(app, purchase.purchaseToken), { consumeState: 'consumed', userId: fan.id });
  const [order] = await app.db.orm.select().from(orders).where(eq(orders.id, data.order.id));
  t.match(order, { providerRef: purchase.orderId, amount: null, currency: null, status: 'fulfilled' });

  t.test('the same token again (and again at once) credits nothing more', async (t) => {
    const replays = await Promise.all([1, 2, 3].map(() => credit(app, fan, purchase.purchaseToken)));
    for (const replay of replays) {
      expectStatus(replay, 200, 'replay');
      t.match(replay.json().data, { status: 'already_credited', consumed: true, order: { id: data.order.id } });
    }
    t.equal(await balance(app, fan), 1100);
    t.equal(await topups(app, fan.id), 1);
    t.equal(google.tokensIssued(), 1, 'one access token, cached for every call');
    google.revokeTokens();
    expectStatus(await credit(app, fan, purchase.purchaseToken), 200, 'after Google forgot the token');
    t.equal(google.tokensIssued(), 2, 'a token Google refuses is renewed once');
  });

  t.test('another account sending the same purchase is refused', async (t) => {
    const other = await signIn(app, 'fan-google-other');
    const res = await credit(app, other, purchase.purchaseToken);
    t.equal(res.statusCode, 409);
    t.equal(res.json().error.code, 'store_purchase_claimed');
    t.equal(await balance(app, other), 0);
    t.equal(await balance(app, fan), 1100);
  });

  t.test('a purchase made for another account credits nobody', async (t) => {
    const other = await signIn(app, 'fan-google-thief');
    for (const named of [fan.id, null, 'someone-else']) {
      const foreign = google.buy(SKU, named);
      const res = await credit(app, other, foreign.purchaseToken);
      t.equal(res.statusCode, 403, `obfuscatedExternalAccountId ${named}`);
      t.equal(res.json().error.code, 'store_purchase_not_yours');
    }
    t.equal(await balance(app, other), 0);
    t.equal(await balance(app, fan), 1100, 'the owner was not credited by the thief either');
  });

  t.test('unknown product, unknown token, cancelled, multi-quantity, malformed', async (t) => {
    const unknown = await credit(app, fan, purchase.purchaseToken, 'coins_9999');
    t.equal(unknown.statusCode, 404);
    t.equal(unknown.json().error.code, 'store_product_not_found');
    const noSuch = await credit(app, fan, 'no-such-token');
    t.equal(noSuch.statusCode, 404);
    t.equal(noSuch.json().error.code, 'store_purchase_not_found');
    const cancelled = google.buy(SKU, fan.id, { purchaseState: 1 });
    t.equal((await credit(app, fan, cancelled.purchaseToken)).json().error.code, 'store_purchase_cancelled');
    const many = google.buy(SKU, fan.id, { quantity: 3 });
    t.equal((await credit(app, fan, many.purchaseToken)).json().error.code, 'store_purchase_unsupported');
    const stateless = google.buy(SKU, fan.id, { purchaseState: null });
    const unreadable = await credit(app, fan, stateless.purchaseToken);
    t.equal(unreadable.statusCode, 502, 'an answer without purchaseState is unreadable, not purchased');
    t.equal(unreadable.json().error.code, 'store_error');
    t.equal(google.purchases.get(stateless.purchaseToken)?.consumptionState, 0, 'nor consumed');
    for (const payload of [
      {},
      { productId: SKU },
      { productId: 'Bad SKU', purchaseToken: 'x' },
      { productId: SKU, purchaseToken: 'x', extra: 1 },
      { productId: SKU, purchaseToken: 'a/b' },
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/checkout/google',
        headers: bearer(fan.token),
        payload,
      });
      t.equal(res.statusCode, 400, JSON.stringify(payload));
    }
    const anonymous = await app.inject({
      method: 'POST',
      url: '/api/checkout/google',
      payload: { productId: SKU, purchaseToken: 'x' },
    });
    t.equal(anonymous.statusCode, 401);
    t.equal(await balance(app, fan), 1100);
    await assertNoViolations(t, app);
  });
});

t.test('a product id or purchase token of dots only is refused before Google is asked', async (t) => {
  const { google, app } = await setup(t);
  const fan = await signIn(app, 'fan-dots');
  for (const [productId, purchaseToken] of [
    [SKU, '.'],
    [SKU, '..'],
    [SKU, '...'],
    ['..', 'some-token'],
  ] as const) {
    const res = await creditGoogle(app, fan.token, productId, purchaseToken);
    t.equal(res.statusCode, 400, `${productId} / ${purchaseToken}`);
    t.equal(res.json().error.code, 'validation_failed');
  }
  t.same(google.requests, [], 'Google received no request');
  expectStatus(await credit(app, fan, 'a..b.c'), 404, 'dots among other characters are a token like any other');
});

t.test('a pending purchase credits nothing; once purchased, it credits once', async (t) => {
  const { google, app } = await setup(t);
  const fan = await signIn(app, 'fan-pending');
  const purchase = google.buy(SKU, fan.id, { purchaseState: 2, orderId: null });
  const pending = await credit(app, fan, purchase.purchaseToken);
  t.equal(pending.statusCode, 202);
  t.same(pending.json().data, { status: 'pending', order: null, consumed: false });
  t.equal(await balance(app, fan), 0);
  t.equal((await app.db.orm.select().from(orders)).length, 0, 'no order for a pending purchase');

  google.purchases.get(purchase.purchaseToken)!.purchaseState = 0;
  const paid = await credit(app, fan, purchase.purchaseToken);
  expectStatus(paid, 200, 'paid');
  t.equal(paid.json().data.status, 'credited');
  t.equal(
    (await app.db.orm.select().from(orders))[0]?.providerRef,
    `token:${purchase.purchaseToken}`,
    'a purchase without an order id is kept by its token',
  );
  t.equal((await credit(app, fan, purchase.purchaseToken)).json().data.status, 'already_credited');
  t.equal(await balance(app, fan), 1100);
  await assertNoViolations(t, app);
});

t.test('a consume that fails is remembered and retried by retry-google-consumes', async (t) => {
  const { google, app } = await setup(t);
  const logs = captureLogs(app);
  const fan = await signIn(app, 'fan-consume');
  const purchase = google.buy(SKU, fan.id);
  google.failConsumes(1);
  const res = await credit(app, fan, purchase.purchaseToken);
  expectStatus(res, 200, 'credit');
  t.match(res.json().data, { status: 'credited', consumed: false });
  t.equal(await balance(app, fan), 1100, 'the coins do not wait for the consume');
  const row = await tokenRow(app, purchase.purchaseToken);
  t.match(row, { consumeState: 'pending', consumeAttempts: 1 });
  t.ok(row?.nextConsumeAt && row.nextConsumeAt.getTime() > Date.now(), 'tried again later');

  t.same(await runJob(app, 'retry-google-consumes'), { job: 'retry-google-consumes', processed: 0 }, 'not due yet');
  await app.db.orm
    .update(googlePlayPurchases)
    .set({ nextConsumeAt: sql`now()` })
    .where(eq(googlePlayPurchases.purchaseToken, purchase.purchaseToken));
  t.same(await runJob(app, 'retry-google-consumes'), { job: 'retry-google-consumes', processed: 1 });
  t.equal(google.purchases.get(purchase.purchaseToken)?.consumptionState, 1);
  t.match(await tokenRow(app, purchase.purchaseToken), { consumeState: 'consumed' });
  t.same(await runJob(app, 'retry-google-consumes'), { job: 'retry-google-consumes', processed: 0 }, 'done once');
  t.equal(await balance(app, fan), 1100);

  // A consume still failing after Google's three days is given up: Google has refunded it.
  const late = google.buy(SKU, fan.id, { purchaseTimeMillis: Date.now() - 4 * 86_400_000 });
  google.failConsumes(1);
  t.match((await credit(app, fan, late.purchaseToken)).json().data, { status: 'credited', consumed: false });
  await app.db.orm
    .update(googlePlayPurchases)
    .set({ nextConsumeAt: sql`now()` })
    .where(eq(googlePlayPurchases.purchaseToken, late.purchaseToken));
  t.same(await runJob(app, 'retry-google-consumes'), { job: 'retry-google-consumes', processed: 0 });
  t.match(await tokenRow(app, late.purchaseToken), { consumeState: 'abandoned' });
  t.equal(google.purchases.get(late.purchaseToken)?.consumptionState, 0, 'not consumed after three days');

  const told = logs.filter((line) => /consume/.test(line));
  t.ok(
    told.some((line) => line.includes(tokenHash(purchase.purchaseToken))),
    'the failure is logged by its hash',
  );
  t.ok(
    told.some((line) => line.includes(tokenHash(late.purchaseToken))),
    'and so is giving up',
  );
  for (const token of [purchase.purchaseToken, late.purchaseToken])
    t.notOk(
      logs.some((line) => line.includes(token)),
      'a purchase token is never logged',
    );
});

t.test('a consume cut short before its outcome is recorded is still tried by retry-google-consumes', async (t) => {
  const { google, app } = await setup(t);
  const fan = await signIn(app, 'fan-cut-short');
  const purchase = google.buy(SKU, fan.id);
  google.breakConsumes(1);
  const res = await credit(app, fan, purchase.purchaseToken);
  expectStatus(res, 200, 'credit');
  t.match(res.json().data, { status: 'credited', consumed: false }, 'the coins are in; the consume is not known done');
  t.equal(google.purchases.get(purchase.purchaseToken)?.consumptionState, 1, 'Google did consume it');
  const row = await tokenRow(app, purchase.purchaseToken);
  t.match(row, { consumeState: 'pending', consumeAttempts: 0 }, 'no failure was recorded');
  t.ok(row?.nextConsumeAt && row.nextConsumeAt.getTime() > Date.now() + 60_000, 'due once its lease ends');
  t.same(await runJob(app, 'retry-google-consumes'), { job: 'retry-google-consumes', processed: 0 }, 'leased');

  // The lease ends.
  await app.db.orm
    .update(googlePlayPurchases)
    .set({ nextConsumeAt: sql`${googlePlayPurchases.nextConsumeAt} - interval '10 minutes'` })
    .where(eq(googlePlayPurchases.purchaseToken, purchase.purchaseToken));
  t.same(await runJob(app, 'retry-google-consumes'), { job: 'retry-google-consumes', processed: 1 });
  t.match(
    await tokenRow(app, purchase.purchaseToken),
    { consumeState: 'consumed', nextConsumeAt: null },
    'Google answering "already consumed" is read as done',
  );
  t.same(await runJob(app, 'retry-google-consumes'), { job: 'retry-google-consumes', processed: 0 }, 'once');
  t.equal(await balance(app, fan), 1100);
});

t.test('Google unreachable or refusing: a clean 5xx in the error envelope, nothing credited', async (t) => {
  const { google, app } = await setup(t);
  const fan = await signIn(app, 'fan-down');
  const purchase = google.buy(SKU, fan.id);
  google.setDown(true);
  const down = await credit(app, fan, purchase.purchaseToken);
  t.equal(down.statusCode, 503);
  t.match(down.json(), { success: false, error: { code: 'store_unreachable' } });
  t.ok(down.headers['retry-after']);
  await t.rejects(runJob(app, 'reconcile-google-voided'), { code: 'store_unreachable' }, 'the job run fails, recorded');
  google.setDown(false);
  t.equal(await balance(app, fan), 0);
  expectStatus(await credit(app, fan, purchase.purchaseToken), 200, 'once Google is back');

  const refused = await setup(t, { GOOGLE_OAUTH_TOKEN_URL: `${google.url}/no-token-here` });
  const other = await signIn(refused.app, 'fan-refused');
  const res = await credit(refused.app, other, refused.google.buy(SKU, other.id).purchaseToken);
  t.equal(res.statusCode, 502);
  t.match(res.json(), { success: false, error: { code: 'store_error' } });
});

t.test('a voided purchase found only by the job, after the coins were spent', async (t) => {
  const { google, app } = await setup(t);
  const fan = await signIn(app, 'fan-voided');
  const kept = google.buy(SKU, fan.id);
  const refunded = google.buy(SKU, fan.id);
  expectStatus(await credit(app, fan, kept.purchaseToken), 200, 'first');
  const { order } = (await credit(app, fan, refunded.purchaseToken)).json().data;
  expectStatus(await adjust(app, fan.id, { amount: -2000, reason: 'spent on packs' }), 201, 'spent');
  t.equal(await balance(app, fan), 200);
  // Others' voided purchases (not ours) page past the first page.
  for (const stranger of [1, 2, 3]) google.voidPurchase(google.buy(SKU, `stranger-${stranger}`).purchaseToken);
  google.voidPurchase(refunded.purchaseToken);

  t.same(await runJob(app, 'reconcile-google-voided'), { job: 'reconcile-google-voided', processed: 1 });
  t.equal(await balance(app, fan), 0, 'never below zero');
  const [row] = await app.db.orm.select().from(orders).where(eq(orders.id, order.id));
  t.match(row, { status: 'refunded', coinsReversed: 1100, uncollected: 900 });
  const uncollected = await app.inject({
    method: 'GET',
    url: '/api/admin/orders?uncollected=true',
    headers: bearer(ADMIN),
  });
  t.match(uncollected.json().data, [{ id: order.id, uncollected: 900 }], 'platform admins see it');

  t.same(await runJob(app, 'reconcile-google-voided'), { job: 'reconcile-google-voided', processed: 0 }, 'too soon');
  // A later run reads the same window again (the overlap): nothing moves twice.
  const aRunAgo = () =>
    app.db.orm.execute(
      sql`update google_play_sync set synced_until = now() - interval '20 minutes', attempted_at = now() - interval '20 minutes'`,
    );
  await aRunAgo();
  await runJob(app, 'reconcile-google-voided');
  t.equal(await balance(app, fan), 0);
  t.match((await app.db.orm.select().from(orders).where(eq(orders.id, order.id)))[0], { uncollected: 900 });
  // A failed run spaces the next one too: an outage does not spend Google's small quota every minute.
  const later = google.buy(SKU, fan.id);
  const laterOrder = (await credit(app, fan, later.purchaseToken)).json().data.order.id as string;
  const laterStatus = async () => (await app.db.orm.select().from(orders).where(eq(orders.id, laterOrder)))[0]?.status;
  google.voidPurchase(later.purchaseToken);
  await aRunAgo();
  google.setDown(true);
  await t.rejects(runJob(app, 'reconcile-google-voided'), { code: 'store_unreachable' });
  google.setDown(false);
  t.same(await runJob(app, 'reconcile-google-voided'), { job: 'reconcile-google-voided', processed: 0 }, 'not yet');
  t.equal(await laterStatus(), 'fulfilled');
  await aRunAgo();
  await runJob(app, 'reconcile-google-voided');
  t.equal(await laterStatus(), 'refunded', 'then read');
  t.equal((await credit(app, fan, refunded.purchaseToken)).json().error.code, 'store_purchase_cancelled');
  await assertNoViolations(t, app);
});
