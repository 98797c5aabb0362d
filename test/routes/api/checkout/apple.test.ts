import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { appleNotifications, orders, walletLedger } from '../../../../db/schema.js';
import { recordNotification } from '../../../../plugins/app/app-store/repository.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { createAppleCa, signJws } from '../../../support/apple-ca.js';
import { type AppleStandIn, deliverApple, nextTransactionId, startAppleStandIn } from '../../../support/apple.js';
import { ADMIN, expectStatus } from '../../../support/catalog.js';
import { someoneWaitsForALock } from '../../../support/locks.js';
import { assertNoViolations } from '../../../support/economy.js';
import { signIn } from '../../../support/teams.js';

/**
 * App Store purchases end to end: StoreKit transactions signed by a CA of our own shaped like
 * Apple's, verified by Apple's library, credited once; forged ones refused; refunds, reversals,
 * missed notifications and consumption requests through the webhook, the job and an API stand-in.
 */

const SKU = 'com.example.packs.coins1000';

const purchase = (app: App, token: string, signedTransaction: string) =>
  app.inject({ method: 'POST', url: '/api/checkout/apple', headers: bearer(token), payload: { signedTransaction } });
const balanceOf = async (app: App, token: string) =>
  (await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(token) })).json().data.balance as number;
const appleOrder = async (app: App, transactionId: string) =>
  (
    await app.db.orm
      .select()
      .from(orders)
      .where(and(eq(orders.provider, 'apple'), eq(orders.providerRef, transactionId)))
  )[0];
const spendAll = async (app: App, userId: string, token: string, keep: number) =>
  expectStatus(
    await app.inject({
      method: 'POST',
      url: `/api/admin/wallets/${userId}/adjustments`,
      headers: bearer(ADMIN),
      payload: { amount: -((await balanceOf(app, token)) - keep), reason: 'spent on packs' },
    }),
    201,
    'spend',
  );

t.test('without Apple configured, the Apple endpoints answer 503 store_unavailable', async (t) => {
  const app = await buildTestApp(t);
  const fan = await signIn(app, 'apple-off');
  const res = await purchase(app, fan, 'a.b.c');
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'store_unavailable');
  const hook = await deliverApple(app, 'a.b.c');
  t.equal(hook.statusCode, 503);
  t.equal((await app.inject({ method: 'POST', url: '/api/webhooks/apple', payload: {} })).statusCode, 503);
  t.equal((await app.jobs.run('recover-apple-notifications', 'request')).processed, 0);
});

t.test('App Store purchases', async (t) => {
  const apple: AppleStandIn = await startAppleStandIn();
  t.teardown(() => apple.close());
  // The job runs only when a test runs it: an in-process run would take the stand-in's failures meant for a test.
  const app = await buildTestApp(t, { ...apple.env, CRON_INTERNAL: 'false' });
  expectStatus(
    await app.inject({
      method: 'POST',
      url: '/api/admin/products',
      headers: bearer(ADMIN),
      payload: { name: 'iOS coins', coins: 1000, bonusCoins: 100, appleProductId: SKU },
    }),
    201,
    'a bundle sold in the App Store',
  );
  const fan = await signIn(app, 'apple-fan');
  const other = await signIn(app, 'apple-other');
  const bought = (userId = 'apple-fan', fields = {}) => apple.transaction({ userId, productId: SKU, ...fields });

  t.test('the account token the app sets, and consent defaulting to no', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/api/checkout/apple/account', headers: bearer(fan) });
    expectStatus(res, 200, 'account');
    t.match(res.json().data, { appAccountToken: /^[0-9a-f-]{36}$/, consumptionDataConsent: false });
  });

  t.test('credited once: 201, then the same order with 200', async (t) => {
    const transactionId = nextTransactionId();
    const jws = bought('apple-fan', { transactionId });
    const before = await balanceOf(app, fan);
    const first = await purchase(app, fan, jws);
    expectStatus(first, 201, 'credited');
    t.match(first.json().data, {
      credited: true,
      order: { provider: 'apple', status: 'fulfilled', coins: 1100, amount: 499, currency: 'usd', priceId: null },
    });
    t.equal(await balanceOf(app, fan), before + 1100);
    const again = await purchase(app, fan, jws);
    expectStatus(again, 200, 'replayed');
    t.same(again.json().data, { ...first.json().data, credited: false });
    t.equal(await balanceOf(app, fan), before + 1100, 'once');
    t.equal((await appleOrder(app, transactionId))?.providerRef, transactionId);
  });

  t.test('the same transaction posted ten times at once: one credit', async (t) => {
    const jws = bought();
    const before = await balanceOf(app, fan);
    const answers = await Promise.all(Array.from({ length: 10 }, () => purchase(app, fan, jws)));
    t.same(answers.map((res) => res.statusCode).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    t.equal(await balanceOf(app, fan), before + 1100);
    await assertNoViolations(t, app);
  });

  t.test("one account's transaction redeemed by another, or a token that is no one's: 403", async (t) => {
    const jws = bought('apple-fan');
    const res = await purchase(app, other, jws);
    t.equal(res.statusCode, 403);
    t.equal(res.json().error.code, 'store_account_mismatch');
    t.equal(await balanceOf(app, other), 0);
    const stray = await purchase(
      app,
      fan,
      bought('apple-fan', { appAccountToken: '00000000-0000-4000-8000-000000000000' }),
    );
    t.equal(stray.json().error.code, 'store_account_mismatch');
    const none = await purchase(app, fan, bought('apple-fan', { appAccountToken: undefined }));
    t.equal(none.statusCode, 403, 'no token at all');
    // Its rightful owner still gets it afterwards.
    expectStatus(await purchase(app, fan, jws), 201, 'the buyer');
  });

  t.test('forged or foreign transactions: 400 invalid_signed_data, nothing credited', async (t) => {
    const before = await balanceOf(app, fan);
    const strangers = createAppleCa('Stranger');
    const tampered = bought().split('.');
    const payload = JSON.parse(Buffer.from(tampered[1] as string, 'base64url').toString());
    payload.productId = SKU;
    payload.quantity = 50;
    const forged = [
      signJws(strangers, JSON.parse(Buffer.from(bought().split('.')[1] as string, 'base64url').toString())),
      signJws(createAppleCa('Unmarked', { markers: false }), payload),
      `${tampered[0]}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${tampered[2]}`,
      bought('apple-fan', { bundleId: 'com.example.other' }),
      bought('apple-fan', { environment: 'Sandbox' }),
      bought('apple-fan', { environment: 'Xcode' }),
      bought('apple-fan', { environment: 'LocalTesting' }),
      'e30.e30.e30',
    ];
    for (const [i, jws] of forged.entries()) {
      const res = await purchase(app, fan, jws);
      t.equal(res.statusCode, 400, `forged ${i}`);
      t.equal(res.json().error.code, 'invalid_signed_data');
    }
    // A local-testing transaction carries no chain at all: refused by a production configuration.
    const [, body] = bought('apple-fan', { environment: 'LocalTesting' }).split('.');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'ES256' })).toString('base64url')}.${body}.c2ln`;
    t.equal((await purchase(app, fan, unsigned)).statusCode, 400);
    t.equal(await balanceOf(app, fan), before);
  });

  t.test('an unknown SKU, a non-consumable, a revoked purchase', async (t) => {
    const unknown = await purchase(app, fan, apple.transaction({ userId: 'apple-fan', productId: 'com.example.none' }));
    t.equal(unknown.statusCode, 404);
    t.equal(unknown.json().error.code, 'store_product_not_found');
    const subscription = await purchase(app, fan, bought('apple-fan', { type: 'Non-Consumable' }));
    t.equal(subscription.statusCode, 409);
    t.equal(subscription.json().error.code, 'store_purchase_not_consumable');
    const revoked = await purchase(app, fan, bought('apple-fan', { revocationDate: Date.now() }));
    t.equal(revoked.statusCode, 409);
    t.equal(revoked.json().error.code, 'store_purchase_revoked');
  });

  t.test('a refund handled while its purchase is being credited is not lost', async (t) => {
    const transactionId = nextTransactionId();
    const before = await balanceOf(app, fan);
    let pending: ReturnType<typeof purchase> | undefined;
    // The refund's transaction: its notification recorded, the order looked for (none yet), held
    // open while the purchase comes in: it must wait for it, not credit past it.
    await app.db.transaction(async (tx) => {
      await recordNotification(tx, {
        notificationUuid: randomUUID(),
        type: 'REFUND',
        subtype: null,
        transactionId,
        signedAt: new Date(),
        source: 'webhook',
      });
      const change = { provider: 'apple' as const, providerRef: transactionId, reason: 'App Store REFUND' };
      t.equal(await app.checkout.reverseStoreOrder(change, tx), false, 'no order yet');
      pending = purchase(app, fan, bought('apple-fan', { transactionId }));
      await Promise.race([pending, someoneWaitsForALock(app)]);
    });
    const res = await (pending as ReturnType<typeof purchase>);
    t.equal(res.statusCode, 409, 'the purchase saw the refund');
    t.equal(res.json().error.code, 'store_purchase_revoked');
    t.equal(await balanceOf(app, fan), before, 'nothing credited');
    t.equal(await appleOrder(app, transactionId), undefined);
  });

  t.test('a refund after the coins were spent, delivered twice, then reversed', async (t) => {
    const transactionId = nextTransactionId();
    const jws = bought('apple-fan', { transactionId });
    expectStatus(await purchase(app, fan, jws), 201, 'bought');
    await spendAll(app, 'apple-fan', fan, 300);
    const refund = apple.notification('REFUND', bought('apple-fan', { transactionId, revocationDate: Date.now() }));
    expectStatus(await deliverApple(app, refund.jws), 200, 'refund');
    t.equal(await balanceOf(app, fan), 0, 'never below zero');
    t.match(await appleOrder(app, transactionId), { status: 'refunded', coinsReversed: 1100, uncollected: 800 });
    expectStatus(await deliverApple(app, refund.jws), 200, 'the same notification again');
    t.equal(await balanceOf(app, fan), 0);
    t.match(await appleOrder(app, transactionId), { coinsReversed: 1100, uncollected: 800 });
    const rows = await app.db.orm
      .select()
      .from(appleNotifications)
      .where(eq(appleNotifications.notificationUuid, refund.uuid));
    t.match(rows, [{ type: 'REFUND', transactionId, source: 'webhook' }]);
    const replayed = await purchase(app, fan, jws);
    t.equal(replayed.statusCode, 409, 'the app reporting it again after the refund');
    t.equal(replayed.json().error.code, 'store_purchase_revoked');
    const list = await app.inject({ method: 'GET', url: '/api/admin/orders?uncollected=true', headers: bearer(ADMIN) });
    t.ok(
      list
        .json()
        .data.some(
          (order: { provider: string; uncollected: number }) => order.provider === 'apple' && order.uncollected === 800,
        ),
    );
    await assertNoViolations(t, app);

    const reversed = apple.notification('REFUND_REVERSED', bought('apple-fan', { transactionId }));
    expectStatus(await deliverApple(app, reversed.jws), 200, 'reversed');
    t.equal(await balanceOf(app, fan), 300, 'what the refund took comes back');
    t.match(await appleOrder(app, transactionId), { status: 'fulfilled', coinsReversed: 0, uncollected: 0 });
    expectStatus(await deliverApple(app, reversed.jws), 200, 'again');
    t.equal(await balanceOf(app, fan), 300);
    const again = await purchase(app, fan, jws);
    expectStatus(again, 200, 'reported again after the reversal: the order, nothing more');
    t.match(again.json().data, { credited: false, order: { status: 'fulfilled' } });
    t.equal(await balanceOf(app, fan), 300);
    const entries = await app.db.orm
      .select()
      .from(walletLedger)
      .where(eq(walletLedger.reference, (await appleOrder(app, transactionId))?.id as string));
    t.same(entries.map((entry) => entry.kind).sort(), ['adjustment', 'refund', 'topup']);
    await assertNoViolations(t, app);
  });

  t.test(
    'a purchase reported only after Apple notified its refund is not credited; after a reversal it is',
    async (t) => {
      const transactionId = nextTransactionId();
      const signedBeforeRefund = bought('apple-fan', { transactionId });
      const refund = apple.notification('REFUND', bought('apple-fan', { transactionId, revocationDate: Date.now() }));
      expectStatus(await deliverApple(app, refund.jws), 200, 'refund of a purchase never reported');
      const late = await purchase(app, fan, signedBeforeRefund);
      t.equal(late.statusCode, 409);
      t.equal(late.json().error.code, 'store_purchase_revoked');
      t.equal(await appleOrder(app, transactionId), undefined, 'no order');
      const reversed = apple.notification('REFUND_REVERSED', bought('apple-fan', { transactionId }), {
        signedDate: Date.now() + 1000,
      });
      expectStatus(await deliverApple(app, reversed.jws), 200, 'reversed');
      expectStatus(await purchase(app, fan, signedBeforeRefund), 201, 'credited once the refund is reversed');
    },
  );

  t.test('REVOKE takes the coins back too; forged and TEST notifications', async (t) => {
    const transactionId = nextTransactionId();
    expectStatus(await purchase(app, fan, bought('apple-fan', { transactionId })), 201, 'bought');
    const before = await balanceOf(app, fan);
    const revoke = apple.notification('REVOKE', bought('apple-fan', { transactionId, revocationDate: Date.now() }));
    expectStatus(await deliverApple(app, revoke.jws), 200, 'revoke');
    t.equal(await balanceOf(app, fan), before - 1100);
    const forged = signJws(createAppleCa('Stranger'), { notificationType: 'REFUND', notificationUUID: 'x' });
    const res = await deliverApple(app, forged);
    t.equal(res.statusCode, 400);
    t.equal(res.json().error.code, 'invalid_signature');
    t.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/api/webhooks/apple',
          headers: { 'content-type': 'application/json' },
          payload: 'not json',
        })
      ).statusCode,
      400,
    );
    const otherApp = apple.notification('REFUND', undefined, {});
    const foreign = signJws(apple.ca, {
      ...JSON.parse(Buffer.from(otherApp.jws.split('.')[1] as string, 'base64url').toString()),
      data: { appAppleId: 999, bundleId: 'com.example.packs', environment: 'Production' },
    });
    t.equal((await deliverApple(app, foreign)).statusCode, 400, 'another app id');
    expectStatus(await deliverApple(app, apple.notification('TEST', undefined).jws), 200, 'TEST acknowledged');
  });

  t.test('a notification the webhook missed, recovered by the job', async (t) => {
    const transactionId = nextTransactionId();
    expectStatus(await purchase(app, fan, bought('apple-fan', { transactionId })), 201, 'bought');
    const before = await balanceOf(app, fan);
    const missed = apple.notification('REFUND', bought('apple-fan', { transactionId, revocationDate: Date.now() }));
    apple.history.push({ signedPayload: missed.jws, at: Date.now() });
    const run = await app.jobs.run('recover-apple-notifications', 'request');
    t.equal(run.processed, 1);
    t.equal(await balanceOf(app, fan), before - 1100);
    t.equal((await appleOrder(app, transactionId))?.status, 'refunded');
    t.ok(apple.requests.includes('POST /inApps/v1/notifications/history'));
    const reads = apple.requests.length;
    t.equal((await app.jobs.run('recover-apple-notifications', 'request')).processed, 0);
    t.equal(apple.requests.length, reads, 'read a moment ago: Apple is not asked again yet');
    // Later: the window is read again from the cursor (less the overlap); what was handled is skipped.
    const later = () => new Date(Date.now() + 11 * 60_000);
    const forged = signJws(createAppleCa('Stranger'), { notificationType: 'REFUND', notificationUUID: 'forged' });
    apple.history.push({ signedPayload: forged, at: Date.now() });
    t.equal(await app.appStore.recoverNotifications(later()), 0, 'seen, or forged and skipped: nothing more');
    t.equal(await balanceOf(app, fan), before - 1100);
    // An outage of the API fails the run; the cursor stays, and the next run reads the window again.
    apple.fail(1);
    await t.rejects(app.appStore.recoverNotifications(new Date(Date.now() + 22 * 60_000)));
    const afterOutage = apple.requests.length;
    t.equal(await app.appStore.recoverNotifications(new Date(Date.now() + 23 * 60_000)), 0);
    t.equal(
      apple.requests.length,
      afterOutage,
      'a failed run spaces the next one too: Apple is not asked every minute',
    );
    await assertNoViolations(t, app);
  });

  t.test(
    'a history window longer than one run: the next run goes on from its page, then the cursor moves',
    async (t) => {
      // Apple answers 20 a page and a run reads 50 pages; one a page makes 55 notifications too many for one run.
      apple.historyPageSize = 1;
      t.teardown(() => {
        apple.historyPageSize = 20;
      });
      const sentAt = Date.now() + 40 * 60_000;
      for (let i = 0; i < 55; i++)
        apple.history.push({ signedPayload: apple.notification('TEST', undefined).jws, at: sentAt });
      const minutes = (m: number) => new Date(Date.now() + m * 60_000);
      t.equal(await app.appStore.recoverNotifications(minutes(41)), 50, 'the first 50 pages');
      const first = apple.requests.length;
      t.equal(await app.appStore.recoverNotifications(minutes(42)), 5, 'a minute later: the rest, from the next page');
      t.ok(apple.requests.length - first <= 6, 'from page 51, not from the start');
      t.equal(
        await app.appStore.recoverNotifications(minutes(43)),
        0,
        'the window read whole: next time after the interval',
      );
      t.equal(await app.appStore.recoverNotifications(minutes(53)), 0, 'a new window: everything in it seen already');
    },
  );

  t.test('CONSUMPTION_REQUEST answered only with consent', async (t) => {
    const transactionId = nextTransactionId();
    expectStatus(await purchase(app, fan, bought('apple-fan', { transactionId })), 201, 'bought');
    const request = () => apple.notification('CONSUMPTION_REQUEST', bought('apple-fan', { transactionId }));
    expectStatus(await deliverApple(app, request().jws), 200, 'without consent');
    t.notOk(apple.consumption.has(transactionId), 'nothing sent');
    const consent = await app.inject({
      method: 'PUT',
      url: '/api/checkout/apple/account',
      headers: bearer(fan),
      payload: { consumptionDataConsent: true },
    });
    expectStatus(consent, 200, 'consent');
    t.equal(consent.json().data.consumptionDataConsent, true);
    await spendAll(app, 'apple-fan', fan, 550);
    apple.fail(1);
    const outage = request();
    t.equal((await deliverApple(app, outage.jws)).statusCode, 503, 'the API did not take it: Apple retries');
    expectStatus(await deliverApple(app, outage.jws), 200, 'with consent');
    t.match(apple.consumption.get(transactionId), {
      customerConsented: true,
      deliveryStatus: 'DELIVERED',
      sampleContentProvided: false,
      consumptionPercentage: 50_000,
    });
    apple.consumption.delete(transactionId);
    apple.fail(1, 400);
    expectStatus(
      await deliverApple(app, request().jws),
      200,
      'Apple refused the answer (too late, say): final, recorded',
    );
    t.notOk(apple.consumption.has(transactionId));
  });
});
