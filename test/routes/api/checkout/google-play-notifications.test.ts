import { eq } from 'drizzle-orm';
import t from 'tap';
import { googlePlayMessages, orders, users } from '../../../../db/schema.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, expectStatus } from '../../../support/catalog.js';
import { adjust, assertNoViolations, balance, signIn } from '../../../support/economy.js';
import { tokenHash } from '../../../../plugins/app/google-play/rules.js';
import {
  captureLogs,
  creditGoogle,
  push,
  pushBody,
  startGooglePlayStandIn,
  strangerKey,
} from '../../../support/google-play.js';

/**
 * Real-time developer notifications pushed by Pub/Sub: only a push whose OIDC token Google signed
 * for our audience and our push service account is read; each message once; what it says is read
 * again from Google before any coin moves.
 */

const SKU = 'coins_500';

t.test('Google Play notifications', async (t) => {
  const google = await startGooglePlayStandIn();
  t.teardown(() => google.close());
  const app = await buildTestApp(t, google.env);
  expectStatus(
    await app.inject({
      method: 'POST',
      url: '/api/admin/products',
      headers: bearer(ADMIN),
      payload: { name: '500 coins', coins: 500, googleProductId: SKU },
    }),
    201,
    'product',
  );
  const fan = await signIn(app, 'fan-rtdn');
  const purchased = (purchaseToken: string, notificationType = 1) => ({
    oneTimeProductNotification: { version: '1.0', notificationType, purchaseToken, sku: SKU },
  });

  t.test('a push without a valid token is 401 and changes nothing', async (t) => {
    const purchase = google.buy(SKU, fan.id);
    const body = pushBody(purchased(purchase.purchaseToken));
    const cases: [string, string | undefined][] = [
      ['no token', undefined],
      ['another audience', google.pushToken({ aud: 'https://elsewhere.example.com/push' })],
      ['another signer', google.pushToken({ email: 'someone@evil-project.iam.gserviceaccount.com' })],
      ['an unverified email', google.pushToken({ email_verified: false })],
      ['another issuer', google.pushToken({ iss: 'https://evil.example.com' })],
      [
        'expired',
        google.pushToken({ iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }),
      ],
      ['a forged signature', google.pushToken({}, { key: strangerKey() })],
      ['an unknown key id', google.pushToken({}, { key: strangerKey(), kid: 'not-googles' })],
      ['not a JWT', 'not-a-jwt'],
    ];
    for (const [what, token] of cases) {
      const res = await push(app, body, token);
      t.equal(res.statusCode, 401, what);
      t.match(res.json(), { success: false, error: { code: token ? 'invalid_token' : 'missing_credentials' } }, what);
    }
    const basic = await app.inject({
      method: 'POST',
      url: '/api/webhooks/google',
      headers: { 'content-type': 'application/json', authorization: 'Basic abc' },
      payload: body,
    });
    t.equal(basic.statusCode, 401, 'not a bearer token');
    t.equal(await balance(app, fan), 0);
    t.equal((await app.db.orm.select().from(googlePlayMessages)).length, 0, 'no message recorded');
    t.notOk(
      google.requests.some((line) => line.includes('/purchases/products/')),
      'Google was never asked',
    );
  });

  t.test('a purchase notified is read from Google and credited to its account, once', async (t) => {
    const purchase = google.buy(SKU, fan.id);
    const body = pushBody(purchased(purchase.purchaseToken), 'message-purchased-1');
    expectStatus(await push(app, body, google.pushToken()), 200, 'push');
    t.equal(await balance(app, fan), 500);
    t.equal(google.purchases.get(purchase.purchaseToken)?.consumptionState, 1, 'consumed');
    const reads = google.requests.length;
    const again = await push(app, body, google.pushToken());
    t.same(again.json(), { received: true }, 'a redelivery is acknowledged');
    t.equal(google.requests.length, reads, 'and not handled again');
    const fromApp = await creditGoogle(app, fan.token, SKU, purchase.purchaseToken);
    t.equal(fromApp.json().data.status, 'already_credited', 'the app reporting it afterwards credits nothing');
    t.equal(await balance(app, fan), 500);
  });

  t.test('the message is only a hint: Google decides', async (t) => {
    const pending = google.buy(SKU, fan.id, { purchaseState: 2 });
    expectStatus(await push(app, pushBody(purchased(pending.purchaseToken)), google.pushToken()), 200, 'pending');
    const unknownAccount = google.buy(SKU, 'nobody-we-know');
    const logs = captureLogs(app);
    expectStatus(await push(app, pushBody(purchased(unknownAccount.purchaseToken)), google.pushToken()), 200, 'nobody');
    t.ok(
      logs.some((line) => line.includes(tokenHash(unknownAccount.purchaseToken))),
      'logged by its hash',
    );
    t.notOk(
      logs.some((line) => line.includes(unknownAccount.purchaseToken)),
      'never by the token itself',
    );
    const made = pushBody({
      oneTimeProductNotification: { version: '1.0', notificationType: 1, purchaseToken: 'made-up', sku: SKU },
    });
    expectStatus(await push(app, made, google.pushToken()), 200, 'unknown token');
    expectStatus(await push(app, pushBody({ testNotification: { version: '1.0' } }), google.pushToken()), 200, 'test');
    const otherApp = JSON.parse(pushBody(purchased(pending.purchaseToken)));
    otherApp.message.data = Buffer.from(
      JSON.stringify({ packageName: 'com.other.app', ...purchased(google.buy(SKU, fan.id).purchaseToken) }),
    ).toString('base64');
    expectStatus(await push(app, JSON.stringify(otherApp), google.pushToken()), 200, 'another app');
    expectStatus(
      await push(
        app,
        JSON.stringify({ message: { messageId: 'garbage-1', data: 'bm90IGpzb24=' } }),
        google.pushToken(),
      ),
      200,
      'unreadable data is acknowledged',
    );
    const asked = google.requests.length;
    for (const [purchaseToken, sku] of [
      ['..', SKU],
      ['.', SKU],
      [pending.purchaseToken, '..'],
    ]) {
      const dots = pushBody({
        oneTimeProductNotification: { version: '1.0', notificationType: 1, purchaseToken, sku },
      });
      expectStatus(await push(app, dots, google.pushToken()), 200, `dots only: ${sku} ${purchaseToken}`);
    }
    t.equal(google.requests.length, asked, 'a token or product id of dots only never reaches Google');
    const notPush = await push(app, JSON.stringify({ hello: 'world' }), google.pushToken());
    t.equal(notPush.statusCode, 400);
    t.equal(notPush.json().error.code, 'invalid_push');
    t.equal(await balance(app, fan), 500, 'nothing credited by any of these');
  });

  t.test('a purchase made for a deleted account is not credited to it', async (t) => {
    const gone = await signIn(app, 'fan-rtdn-deleted');
    await app.db.orm.update(users).set({ deletedAt: new Date() }).where(eq(users.id, gone.id));
    const purchase = google.buy(SKU, gone.id);
    expectStatus(await push(app, pushBody(purchased(purchase.purchaseToken)), google.pushToken()), 200, 'push');
    t.same(await app.db.orm.select().from(orders).where(eq(orders.userId, gone.id)), [], 'no order, no coins');
    t.equal(google.purchases.get(purchase.purchaseToken)?.consumptionState, 0, 'not consumed: Google refunds it');
  });

  t.test('a voided purchase notified takes the coins back, never below zero', async (t) => {
    const purchase = google.buy(SKU, fan.id);
    expectStatus(await creditGoogle(app, fan.token, SKU, purchase.purchaseToken), 200, 'credit');
    t.equal(await balance(app, fan), 1000);
    expectStatus(await adjust(app, fan.id, { amount: -800, reason: 'spent on packs' }), 201, 'spent');
    const voided = {
      voidedPurchaseNotification: {
        purchaseToken: purchase.purchaseToken,
        orderId: purchase.orderId,
        productType: 2,
        refundType: 1,
      },
    };
    // Not voided at Google yet: the message alone moves nothing.
    expectStatus(await push(app, pushBody(voided), google.pushToken()), 200, 'early');
    t.equal(await balance(app, fan), 200);
    google.voidPurchase(purchase.purchaseToken);
    expectStatus(await push(app, pushBody(voided), google.pushToken()), 200, 'voided');
    expectStatus(await push(app, pushBody(voided), google.pushToken()), 200, 'voided again');
    t.equal(await balance(app, fan), 0);
    const [order] = await app.db.orm
      .select()
      .from(orders)
      .where(eq(orders.providerRef, purchase.orderId as string));
    t.match(order, { status: 'refunded', uncollected: 300 });
    await assertNoViolations(t, app);
  });

  t.test('the app and the notification at the same moment credit the purchase once', async (t) => {
    const before = await balance(app, fan);
    const purchase = google.buy(SKU, fan.id);
    const [fromPush, fromApp, again] = await Promise.all([
      push(app, pushBody(purchased(purchase.purchaseToken)), google.pushToken()),
      creditGoogle(app, fan.token, SKU, purchase.purchaseToken),
      creditGoogle(app, fan.token, SKU, purchase.purchaseToken),
    ]);
    expectStatus(fromPush, 200, 'push');
    expectStatus(fromApp, 200, 'app');
    expectStatus(again, 200, 'app again');
    t.equal(await balance(app, fan), before + 500);
    await assertNoViolations(t, app);
    expectStatus(await adjust(app, fan.id, { amount: -500, reason: 'spent on packs' }), 201, 'spent');
  });

  t.test('a purchase cancelled at Google after it was credited gives its coins back', async (t) => {
    const purchase = google.buy(SKU, fan.id);
    expectStatus(await push(app, pushBody(purchased(purchase.purchaseToken)), google.pushToken()), 200, 'bought');
    t.equal(await balance(app, fan), 500);
    google.voidPurchase(purchase.purchaseToken);
    expectStatus(await push(app, pushBody(purchased(purchase.purchaseToken, 2)), google.pushToken()), 200, 'cancel');
    t.equal(await balance(app, fan), 0);
    await assertNoViolations(t, app);
  });

  t.test('Google down while a push is handled: 503, not recorded, handled when delivered again', async (t) => {
    const purchase = google.buy(SKU, fan.id);
    const body = pushBody(purchased(purchase.purchaseToken), 'message-while-down');
    google.setDown(true);
    const down = await push(app, body, google.pushToken());
    google.setDown(false);
    t.equal(down.statusCode, 503);
    t.equal(down.json().error.code, 'store_unreachable');
    t.equal(await balance(app, fan), 0);
    expectStatus(await push(app, body, google.pushToken()), 200, 'redelivered');
    t.equal(await balance(app, fan), 500);
  });
});

t.test("Google's keys unreachable: the push is 503 (delivered again), never a wrong 401", async (t) => {
  const google = await startGooglePlayStandIn();
  t.teardown(() => google.close());
  const app = await buildTestApp(t, google.env);
  google.setDown(true);
  const res = await push(app, pushBody({ testNotification: { version: '1.0' } }), google.pushToken());
  google.setDown(false);
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'auth_unavailable');
  t.ok(res.headers['retry-after']);
  expectStatus(await push(app, pushBody({ testNotification: { version: '1.0' } }), google.pushToken()), 200, 'back');
});
