import { eq, sql } from 'drizzle-orm';
import t, { type Test } from 'tap';
import type { App } from '../../../../app.js';
import { orders, stripeEvents, walletLedger } from '../../../../db/schema.js';
import { bearer, buildTestApp, createTestDatabase } from '../../../support/app.js';
import { ADMIN, expectStatus } from '../../../support/catalog.js';
import { economyViolations } from '../../../support/economy.js';
import {
  deliver,
  type StandInSession,
  signatureFor,
  startStripeStandIn,
  type StripeStandIn,
} from '../../../support/stripe.js';
import { signIn } from '../../../support/teams.js';

/**
 * Coins for money through a Stripe stand-in: an order and its Checkout Session, then webhooks
 * arriving twice, late, out of order, forged or never, and nothing credited twice or lost.
 */

async function bundle(app: App, coins = 1000, bonusCoins = 100, unitAmount = 999) {
  const product = (
    await app.inject({
      method: 'POST',
      url: '/api/admin/products',
      headers: bearer(ADMIN),
      payload: { name: `${coins} coins`, coins, bonusCoins },
    })
  ).json().data;
  const price = (
    await app.inject({
      method: 'POST',
      url: `/api/admin/products/${product.id}/prices`,
      headers: bearer(ADMIN),
      payload: { currency: 'usd', unitAmount },
    })
  ).json().data;
  return { product, price };
}

/** A Stripe stand-in, an app that uses it, a coin bundle's price and a signed-in fan. */
async function checkoutSetup(t: Test, fanId: string) {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await buildTestApp(t, stripe.env);
  const { price } = await bundle(app);
  const fan = await signIn(app, fanId);
  return { stripe, app, price, fan };
}

async function checkout(app: App, token: string, priceId: string, key?: string) {
  return app.inject({
    method: 'POST',
    url: '/api/checkout/sessions',
    headers: { ...bearer(token), ...(key ? { 'idempotency-key': key } : {}) },
    payload: { priceId },
  });
}

const balanceOf = async (app: App, token: string) =>
  (await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(token) })).json().data.balance as number;
const topups = async (app: App, orderId: string) =>
  (await app.db.orm.select().from(walletLedger).where(eq(walletLedger.reference, orderId))).length;
const orderRow = async (app: App, id: string) => (await app.db.orm.select().from(orders).where(eq(orders.id, id)))[0];

/** An order paid and fulfilled through the webhook. */
async function paidOrder(app: App, stripe: StripeStandIn, token: string, priceId: string) {
  const id = (await checkout(app, token, priceId)).json().data.orderId as string;
  const session = stripe.pay((await orderRow(app, id))?.providerRef as string);
  expectStatus(await deliver(app, stripe.event('checkout.session.completed', session).body), 200, 'paid');
  return { id, session };
}

/** Coins spent (an admin debit stands in for buying packs). */
const spend = (app: App, userId: string, coins: number) =>
  app.inject({
    method: 'POST',
    url: `/api/admin/wallets/${userId}/adjustments`,
    headers: bearer(ADMIN),
    payload: { amount: -coins, reason: 'spent on packs' },
  });

t.test('without Stripe configured, checkout answers 503 and the rest works', async (t) => {
  const app = await buildTestApp(t);
  const { price } = await bundle(app);
  const fan = await signIn(app, 'fan-no-stripe');
  const res = await checkout(app, fan, price.id);
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'checkout_unavailable');
  t.equal((await app.db.orm.select().from(orders)).length, 0, 'no order left behind');
  const hook = await deliver(app, '{}');
  t.equal(hook.statusCode, 503);
});

t.test('checkout with a Stripe stand-in', async (t) => {
  const stripe: StripeStandIn = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await buildTestApp(t, stripe.env);
  const { price } = await bundle(app);
  const fan = await signIn(app, 'fan-checkout');

  t.test('an order and its session: the order id is the client reference, the amounts are the price', async (t) => {
    const res = await checkout(app, fan, price.id, 'buy-1');
    expectStatus(res, 201, 'checkout');
    const data = res.json().data;
    t.match(data.url, /^https:\/\/checkout\.stripe\.test\//);
    t.ok(Date.parse(data.expiresAt) > Date.now() + 29 * 60_000, 'CHECKOUT_TTL, 30 minutes');
    const order = await orderRow(app, data.orderId);
    t.match(order, { status: 'pending', coins: 1100, amount: 999, currency: 'usd', userId: 'fan-checkout' });
    const session = stripe.sessions.get(order?.providerRef as string);
    t.match(session, {
      client_reference_id: data.orderId,
      metadata: { orderId: data.orderId },
      amount_total: 999,
      currency: 'usd',
      mode: 'payment',
    });
    t.equal(session?.expires_at, Math.floor(Date.parse(data.expiresAt) / 1000));
    const again = await checkout(app, fan, price.id, 'buy-1');
    t.equal(again.json().data.orderId, data.orderId, 'the same Idempotency-Key: the same order');
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.equal(stripe.sessions.size, 1, 'and no second session');
  });

  t.test('the same checkout.session.completed delivered 20 times at once: one credit', async (t) => {
    const order = (await checkout(app, fan, price.id)).json().data;
    const session = stripe.pay((await orderRow(app, order.orderId))?.providerRef as string);
    const event = stripe.event('checkout.session.completed', session);
    const before = await balanceOf(app, fan);
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(app, event.body)));
    t.same(
      answers.map((res) => res.statusCode),
      Array(20).fill(200),
      'every delivery answered 200',
    );
    t.equal(await balanceOf(app, fan), before + 1100, 'credited once');
    t.equal(await topups(app, order.orderId), 1);
    t.match(await orderRow(app, order.orderId), { status: 'fulfilled', paymentIntent: session.payment_intent });
    const late = stripe.event('checkout.session.async_payment_succeeded', session);
    t.equal((await deliver(app, late.body)).statusCode, 200);
    t.equal(await topups(app, order.orderId), 1, 'async_payment_succeeded after completed: nothing more');
  });

  t.test(
    'completed after expired, an unknown order, a mismatched amount or currency: nothing credited, all 200',
    async (t) => {
      const before = await balanceOf(app, fan);
      const expiredOrder = (await checkout(app, fan, price.id)).json().data;
      const expiredSession = stripe.sessions.get((await orderRow(app, expiredOrder.orderId))?.providerRef as string);
      if (!expiredSession) throw new Error('no session');
      t.equal(
        (await deliver(app, stripe.event('checkout.session.expired', { ...expiredSession, status: 'expired' }).body))
          .statusCode,
        200,
      );
      t.equal((await orderRow(app, expiredOrder.orderId))?.status, 'expired');
      t.equal(
        (
          await deliver(
            app,
            stripe.event('checkout.session.completed', {
              ...expiredSession,
              status: 'complete',
              payment_status: 'paid',
            }).body,
          )
        ).statusCode,
        200,
      );
      t.equal((await orderRow(app, expiredOrder.orderId))?.status, 'expired', 'status only moves forward');

      const unknown = {
        ...expiredSession,
        id: 'cs_test_unknown',
        client_reference_id: 'not-an-order',
        metadata: {},
        payment_status: 'paid' as const,
      };
      t.equal(
        (await deliver(app, stripe.event('checkout.session.completed', unknown).body)).statusCode,
        200,
        'an unknown order',
      );

      for (const [what, change] of [
        ['amount', { amount_total: 1 }],
        ['currency', { currency: 'eur' }],
      ] as const) {
        const order = (await checkout(app, fan, price.id)).json().data;
        const session = stripe.pay((await orderRow(app, order.orderId))?.providerRef as string);
        t.equal(
          (await deliver(app, stripe.event('checkout.session.completed', { ...session, ...change }).body)).statusCode,
          200,
          `a mismatched ${what}`,
        );
        t.match(await orderRow(app, order.orderId), {
          status: 'failed',
          failureReason: new RegExp(what === 'amount' ? 'paid 1' : 'eur'),
        });
      }
      t.equal(await balanceOf(app, fan), before, 'nothing was credited');
    },
  );

  t.test('a bad signature, an old timestamp, a body changed by one byte: 400, nothing stored', async (t) => {
    const order = (await checkout(app, fan, price.id)).json().data;
    const session = stripe.pay((await orderRow(app, order.orderId))?.providerRef as string);
    const event = stripe.event('checkout.session.completed', session);
    const events = async () =>
      (await app.db.orm.select().from(stripeEvents).where(eq(stripeEvents.id, event.id))).length;
    const cases: [string, string, string | undefined][] = [
      ['another secret', event.body, signatureFor(event.body, { secret: 'whsec_someone_else' })],
      [
        'a timestamp 10 minutes old',
        event.body,
        signatureFor(event.body, { timestamp: Math.floor(Date.now() / 1000) - 600 }),
      ],
      ['one byte changed', event.body.replace('"paid"', '"pain"'), signatureFor(event.body)],
      ['no signature', event.body, undefined],
      ['a signature header of garbage', event.body, 't=1,v1=00'],
    ];
    for (const [what, body, signature] of cases) {
      const res =
        signature === undefined
          ? await app.inject({
              method: 'POST',
              url: '/api/webhooks/stripe',
              headers: { 'content-type': 'application/json' },
              payload: body,
            })
          : await deliver(app, body, signature);
      t.equal(res.statusCode, 400, what);
      t.equal(res.json().error.code, 'invalid_signature', what);
    }
    t.equal(await events(), 0, 'no event stored');
    t.equal((await orderRow(app, order.orderId))?.status, 'pending', 'the order untouched');
    t.equal((await deliver(app, event.body)).statusCode, 200, 'the genuine delivery still works');
    t.equal((await orderRow(app, order.orderId))?.status, 'fulfilled');
  });

  t.test('a webhook never delivered: reading the order re-checks it with Stripe and fulfils it', async (t) => {
    const before = await balanceOf(app, fan);
    const order = (await checkout(app, fan, price.id)).json().data;
    stripe.pay((await orderRow(app, order.orderId))?.providerRef as string);
    const read = () =>
      app.inject({ method: 'GET', url: `/api/checkout/orders/${order.orderId}`, headers: bearer(fan) });
    t.equal((await read()).json().data.status, 'pending', 'younger than a minute: not re-checked');
    await app.db.orm
      .update(orders)
      .set({ createdAt: sql`now() - interval '2 minutes'` })
      .where(eq(orders.id, order.orderId));
    const reads = await Promise.all(Array.from({ length: 5 }, read));
    t.same(
      reads.map((res) => res.json().data.status),
      Array(5).fill('fulfilled'),
    );
    t.equal(await balanceOf(app, fan), before + 1100, 'credited once, though read five times at once');
    const list = await app.inject({ method: 'GET', url: '/api/checkout/orders?limit=2', headers: bearer(fan) });
    t.equal(list.json().data.length, 2);
    t.ok(list.json().nextCursor);
    const foreign = await app.inject({
      method: 'GET',
      url: `/api/checkout/orders/${order.orderId}`,
      headers: bearer(await signIn(app, 'fan-other')),
    });
    t.equal(foreign.statusCode, 404, "another user's order");
  });

  t.test('a slow Stripe holds no database connection: the rest of the API keeps answering', async (t) => {
    const release = stripe.holdCreates();
    const created = stripe.requests.length;
    // More checkouts in flight than the pool has connections (10).
    const pending = Array.from({ length: 12 }, (_, i) => checkout(app, fan, price.id, i % 2 ? `slow-${i}` : undefined));
    while (stripe.requests.length < created + 12) await new Promise((resolve) => setTimeout(resolve, 10));
    const timeout = new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), 3000).unref());
    const read = await Promise.race([
      app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan) }).then((res) => res.statusCode),
      timeout,
    ]);
    release();
    t.equal(read, 200, 'a read answered while every checkout waited for Stripe');
    t.same(
      (await Promise.all(pending)).map((res) => res.statusCode),
      Array(12).fill(201),
    );
  });

  t.test('Stripe failing: 503, nothing kept, and a retry with the same Idempotency-Key tries again', async (t) => {
    const before = (await app.db.orm.select().from(orders)).length;
    stripe.failCreates(2);
    const failed = await checkout(app, fan, price.id, 'stripe-down');
    t.equal(failed.statusCode, 503);
    t.equal(failed.json().error.code, 'checkout_unavailable');
    stripe.failCreates(0);
    t.equal((await app.db.orm.select().from(orders)).length, before, 'no order kept');
    const retried = await checkout(app, fan, price.id, 'stripe-down');
    expectStatus(retried, 201, 'the retry');
    t.notOk(retried.headers['idempotent-replayed'], 'not a replay of the outage');
    t.equal(
      (await checkout(app, fan, price.id, 'stripe-down')).headers['idempotent-replayed'],
      'true',
      'the success is what is replayed',
    );
  });

  t.test('prices that cannot be bought', async (t) => {
    expectStatus(await checkout(app, fan, 'no-such-price'), 404, 'unknown price');
    await app.inject({
      method: 'PATCH',
      url: `/api/admin/prices/${price.id}`,
      headers: bearer(ADMIN),
      payload: { active: false },
    });
    const inactive = await checkout(app, fan, price.id);
    expectStatus(inactive, 409, 'inactive price');
    t.equal(inactive.json().error.code, 'price_inactive');
    t.same(await economyViolations(app), [], 'the ledger and balances agree');
  });
});

t.test('the order jobs: a missed webhook costs nobody coins, an unpaid order expires', async (t) => {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const database = await createTestDatabase();
  const env = {
    ...stripe.env,
    CRON_SECRET: 'cron-secret-for-the-order-jobs',
    CRON_INTERNAL: 'false',
    DATABASE_URL: database.url,
  };
  const a = await buildTestApp(t, env);
  const b = await buildTestApp(t, env);
  t.teardown(() => database.drop());
  const { price } = await bundle(a);
  const fan = await signIn(a, 'fan-jobs');
  const cron = (app: App, job: string) =>
    app.inject({
      method: 'POST',
      url: `/api/cron/${job}`,
      headers: { authorization: 'Bearer cron-secret-for-the-order-jobs' },
    });
  const order = async () => {
    const id = (await checkout(a, fan, price.id)).json().data.orderId as string;
    return { id, sessionId: (await orderRow(a, id))?.providerRef as string };
  };
  const age = (id: string, minutes: number) =>
    a.db.orm
      .update(orders)
      .set({ createdAt: sql`now() - ${`${minutes} minutes`}::interval` })
      .where(eq(orders.id, id));

  t.test(
    'reconcile-orders fulfils paid orders whose webhook never came, once, whichever instance runs it',
    async (t) => {
      const paid = await Promise.all([order(), order(), order()]);
      const unpaid = await order();
      for (const { id, sessionId } of paid) {
        stripe.pay(sessionId);
        await age(id, 2);
      }
      await age(unpaid.id, 2);
      const fresh = await order();
      stripe.pay(fresh.sessionId);
      const before = await balanceOf(a, fan);
      const runs = await Promise.all([cron(a, 'reconcile-orders'), cron(b, 'reconcile-orders')]);
      const processed = runs.filter((res) => res.statusCode === 200).map((res) => res.json().data.processed as number);
      t.ok(
        runs.every(
          (res) => res.statusCode === 200 || (res.statusCode === 409 && res.json().error.code === 'job_running'),
        ),
        'each run answered 200, or 409 while the other ran',
      );
      const again = await cron(b, 'reconcile-orders');
      t.equal(
        processed.reduce((sum, n) => sum + n, 0) + again.json().data.processed,
        3,
        'the three paid orders, settled once in all',
      );
      t.equal(await balanceOf(a, fan), before + 3 * 1100, 'credited once each');
      for (const { id } of paid) t.equal(await topups(a, id), 1);
      t.equal((await orderRow(a, unpaid.id))?.status, 'pending', 'an unpaid order within its time stays pending');
      t.equal(
        (await orderRow(a, fresh.id))?.status,
        'pending',
        'an order younger than a minute is left to its webhook',
      );
    },
  );

  t.test(
    'expire-orders expires unpaid orders past their time at Stripe too, and fulfils a paid one instead',
    async (t) => {
      const unpaid = await order();
      const paidLate = await order();
      stripe.pay(paidLate.sessionId);
      for (const { id } of [unpaid, paidLate])
        await a.db.orm.update(orders).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(orders.id, id));
      const before = await balanceOf(a, fan);
      const res = await cron(a, 'expire-orders');
      t.equal(res.statusCode, 200, res.body);
      t.ok(res.json().data.processed >= 2);
      t.equal((await orderRow(a, unpaid.id))?.status, 'expired');
      t.equal(
        stripe.sessions.get(unpaid.sessionId)?.status,
        'expired',
        'the session was expired at Stripe: it can no longer be paid',
      );
      t.equal((await orderRow(a, paidLate.id))?.status, 'fulfilled', 'paid, so fulfilled, never expired');
      t.equal(await balanceOf(a, fan), before + 1100);
      t.same(
        (await cron(a, 'expire-orders')).json().data,
        { job: 'expire-orders', processed: 0 },
        'a second run finds none',
      );
      t.same(await economyViolations(a), []);
    },
  );
});

t.test('refunds take the coins back, never below zero; the rest is uncollected', async (t) => {
  const { stripe, app, price, fan } = await checkoutSetup(t, 'fan-refunds');

  t.test('a full refund after the coins were spent: balance 0, the rest uncollected', async (t) => {
    const { id, session } = await paidOrder(app, stripe, fan, price.id);
    expectStatus(await spend(app, 'fan-refunds', 1000), 201, 'spend');
    t.equal(await balanceOf(app, fan), 100);
    const refund = stripe.event('charge.refunded', stripe.charge(session, 999));
    const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(app, refund.body)));
    t.same(
      answers.map((res) => res.statusCode),
      Array(5).fill(200),
    );
    t.equal(await balanceOf(app, fan), 0, 'never below zero');
    t.match(await orderRow(app, id), {
      status: 'refunded',
      amountRefunded: 999,
      coinsReversed: 1100,
      uncollected: 1000,
    });
    const listed = await app.inject({
      method: 'GET',
      url: '/api/admin/orders?uncollected=true',
      headers: bearer(ADMIN),
    });
    expectStatus(listed, 200, 'admin list');
    t.same(
      listed
        .json()
        .data.map((order: { id: string; uncollected: number; userId: string }) => [
          order.id,
          order.uncollected,
          order.userId,
        ]),
      [[id, 1000, 'fan-refunds']],
    );
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/admin/orders?uncollected=true', headers: bearer(fan) })).statusCode,
      403,
      'for platform admins only',
    );
  });

  t.test('partial refunds add up: each event asks for the total so far', async (t) => {
    const { id, session } = await paidOrder(app, stripe, fan, price.id);
    const before = await balanceOf(app, fan);
    expectStatus(await deliver(app, stripe.event('charge.refunded', stripe.charge(session, 500)).body), 200, 'half');
    t.equal(await balanceOf(app, fan), before - 550, 'the refunded share: 1100 coins x 500/999, rounded down');
    t.match(await orderRow(app, id), { status: 'fulfilled', coinsReversed: 550, uncollected: 0 });
    expectStatus(
      await deliver(app, stripe.event('charge.refunded', stripe.charge(session, 999)).body),
      200,
      'the rest',
    );
    t.equal(await balanceOf(app, fan), before - 1100, 'then the rest, not 1100 again');
    t.match(await orderRow(app, id), { status: 'refunded', coinsReversed: 1100 });
    expectStatus(
      await deliver(app, stripe.event('charge.refunded', stripe.charge(session, 500)).body),
      200,
      'a late, smaller total',
    );
    t.equal(await balanceOf(app, fan), before - 1100, 'changes nothing');
  });

  t.test('a refund that arrives before its payment is fulfilled is delivered again, then applied', async (t) => {
    const before = await balanceOf(app, fan);
    const id = (await checkout(app, fan, price.id)).json().data.orderId as string;
    const session = stripe.pay((await orderRow(app, id))?.providerRef as string);
    const early = stripe.event('charge.refunded', stripe.charge(session, 999));
    const refused = await deliver(app, early.body);
    t.equal(refused.statusCode, 503, 'not yet: Stripe will deliver it again');
    t.equal(refused.json().error.code, 'order_not_settled');
    expectStatus(await deliver(app, stripe.event('checkout.session.completed', session).body), 200, 'the payment');
    t.equal(await balanceOf(app, fan), before + 1100);
    expectStatus(await deliver(app, early.body), 200, 'the refund, delivered again');
    t.equal(await balanceOf(app, fan), before, 'the coins were not kept with the money');
    t.equal((await orderRow(app, id))?.status, 'refunded');
  });

  t.test('a refund of no order of ours: retried for a day, then acknowledged and ignored', async (t) => {
    const before = await balanceOf(app, fan);
    const stray = stripe.charge(
      { ...[...stripe.sessions.values()][0], payment_intent: 'pi_not_ours', amount_total: 999 } as Parameters<
        typeof stripe.charge
      >[0],
      999,
    );
    t.equal(
      (await deliver(app, stripe.event('charge.refunded', stray).body)).statusCode,
      503,
      'recent: delivered again later',
    );
    const old = JSON.parse(stripe.event('charge.refunded', stray).body);
    old.created -= 2 * 86_400;
    expectStatus(await deliver(app, JSON.stringify(old)), 200, 'two days old: ignored');
    t.equal(await balanceOf(app, fan), before);
    t.same(await economyViolations(app), []);
  });
});

t.test('a dispute takes the coins back; won, they come back', async (t) => {
  const { stripe, app, price, fan } = await checkoutSetup(t, 'fan-disputes');

  const won = await paidOrder(app, stripe, fan, price.id);
  expectStatus(await spend(app, 'fan-disputes', 600), 201, 'spend');
  t.equal(await balanceOf(app, fan), 500);
  const opened = stripe.event('charge.dispute.created', stripe.dispute(won.session, 'needs_response'));
  await Promise.all([deliver(app, opened.body), deliver(app, opened.body)]);
  t.equal(await balanceOf(app, fan), 0, 'taken back as far as the balance goes');
  t.match(await orderRow(app, won.id), {
    status: 'disputed',
    coinsReversed: 1100,
    uncollected: 600,
    disputeTaken: 500,
  });
  expectStatus(
    await deliver(app, stripe.event('charge.dispute.closed', stripe.dispute(won.session, 'won')).body),
    200,
    'won',
  );
  t.equal(await balanceOf(app, fan), 500, 'the coins it took come back');
  t.match(await orderRow(app, won.id), { status: 'fulfilled', coinsReversed: 0, uncollected: 0, disputeTaken: 0 });

  const inquiry = await paidOrder(app, stripe, fan, price.id);
  const balance = await balanceOf(app, fan);
  expectStatus(
    await deliver(
      app,
      stripe.event(
        'charge.dispute.created',
        stripe.dispute(inquiry.session, 'warning_needs_response' as 'needs_response'),
      ).body,
    ),
    200,
    'an inquiry',
  );
  t.equal(await balanceOf(app, fan), balance, 'an inquiry withdraws no money, so takes no coins');
  t.equal((await orderRow(app, inquiry.id))?.status, 'fulfilled');
  expectStatus(await spend(app, 'fan-disputes', 1100), 201, 'spend the inquiry order');

  const lost = await paidOrder(app, stripe, fan, price.id);
  expectStatus(
    await deliver(app, stripe.event('charge.dispute.created', stripe.dispute(lost.session, 'needs_response')).body),
    200,
    'opened',
  );
  expectStatus(
    await deliver(app, stripe.event('charge.dispute.closed', stripe.dispute(lost.session, 'lost')).body),
    200,
    'lost',
  );
  t.equal(await balanceOf(app, fan), 500, 'lost: the coins stay taken');
  t.equal((await orderRow(app, lost.id))?.status, 'disputed');
  t.same(await economyViolations(app), []);
});

t.test('a refund delivered during a dispute: the won dispute returns only what was not refunded', async (t) => {
  const { stripe, app, price, fan } = await checkoutSetup(t, 'fan-refund-in-dispute');
  const open = (session: Parameters<StripeStandIn['dispute']>[0]) =>
    deliver(app, stripe.event('charge.dispute.created', stripe.dispute(session, 'needs_response')).body);
  const won = (session: Parameters<StripeStandIn['dispute']>[0]) =>
    deliver(app, stripe.event('charge.dispute.closed', stripe.dispute(session, 'won')).body);
  const refunded = (session: Parameters<StripeStandIn['dispute']>[0], amount: number) =>
    deliver(app, stripe.event('charge.refunded', stripe.charge(session, amount)).body);

  t.test('the balance covered the dispute: half refunded meanwhile, half comes back', async (t) => {
    const { id, session } = await paidOrder(app, stripe, fan, price.id);
    const before = await balanceOf(app, fan);
    expectStatus(await open(session), 200, 'dispute');
    t.equal(await balanceOf(app, fan), before - 1100);
    expectStatus(await refunded(session, 500), 200, 'a refund made before the dispute, delivered after it');
    t.equal(await balanceOf(app, fan), before - 1100, 'the dispute already took every coin: the refund takes none');
    t.match(await orderRow(app, id), {
      status: 'disputed',
      amountRefunded: 500,
      coinsReversed: 1100,
      disputeTaken: 550,
    });
    expectStatus(await won(session), 200, 'won');
    t.equal(await balanceOf(app, fan), before - 550, 'the refunded share stays taken; the rest comes back');
    t.match(await orderRow(app, id), { status: 'fulfilled', coinsReversed: 550, uncollected: 0, disputeTaken: 0 });
  });

  t.test('the coins were spent: the refund is taken from what the dispute collected first', async (t) => {
    const { id, session } = await paidOrder(app, stripe, fan, price.id);
    const spendable = await balanceOf(app, fan);
    expectStatus(await spend(app, 'fan-refund-in-dispute', spendable - 500), 201, 'spend all but 500');
    expectStatus(await open(session), 200, 'dispute');
    t.match(await orderRow(app, id), { disputeTaken: 500, uncollected: 600 });
    expectStatus(await refunded(session, 500), 200, 'refund of 550 coins');
    expectStatus(await won(session), 200, 'won');
    t.equal(await balanceOf(app, fan), 0, 'nothing comes back: the 500 collected belong to the refund');
    t.match(
      await orderRow(app, id),
      { status: 'fulfilled', coinsReversed: 550, uncollected: 50 },
      'the refund still lacks 50 coins',
    );
  });

  t.test('fully refunded during the dispute: won, nothing comes back and the order is refunded', async (t) => {
    const { id, session } = await paidOrder(app, stripe, fan, price.id);
    const before = await balanceOf(app, fan);
    expectStatus(await open(session), 200, 'dispute');
    expectStatus(await refunded(session, 999), 200, 'refund in full');
    expectStatus(await won(session), 200, 'won');
    t.equal(await balanceOf(app, fan), before - 1100);
    t.match(await orderRow(app, id), { status: 'refunded', coinsReversed: 1100, uncollected: 0 });
    t.same(await economyViolations(app), []);
  });
});

t.test('paid orders that cannot be credited wait for review; the webhook is acknowledged', async (t) => {
  const { stripe, app, price, fan } = await checkoutSetup(t, 'fan-review');
  const reviewList = async () =>
    (await app.inject({ method: 'GET', url: '/api/admin/orders?needsReview=true', headers: bearer(ADMIN) }))
      .json()
      .data.map((order: { id: string }) => order.id) as string[];
  const completed = (session: object) => deliver(app, stripe.event('checkout.session.completed', session).body);
  const refunded = (session: StandInSession, amount: number) =>
    deliver(app, stripe.event('charge.refunded', stripe.charge(session, amount)).body);
  const credit = (id: string, token = ADMIN) =>
    app.inject({ method: 'POST', url: `/api/admin/orders/${id}/credit`, headers: bearer(token) });
  // Adjustments move at most 1,000,000,000 coins each.
  const nearlyFull = [1_000_000_000, 1_000_000_000, 2_147_483_647 - 1000 - 2_000_000_000];
  const fill = async () => {
    for (const coins of nearlyFull)
      expectStatus(await spend(app, 'fan-review', -coins), 201, 'credit the wallet to 1000 below the limit');
  };
  const empty = async () => {
    for (const coins of nearlyFull) expectStatus(await spend(app, 'fan-review', coins), 201, 'empty the wallet');
  };

  t.test(
    'a full wallet: refused before paying; paid anyway, the order fails for review and a full refund settles it',
    async (t) => {
      const id = (await checkout(app, fan, price.id)).json().data.orderId as string;
      await fill();
      const refused = await checkout(app, fan, price.id);
      expectStatus(refused, 409, 'checkout with a full wallet');
      t.equal(refused.json().error.code, 'balance_limit');
      const session = stripe.pay((await orderRow(app, id))?.providerRef as string);
      const answers = await Promise.all([completed(session), completed(session)]);
      t.same(
        answers.map((res) => res.statusCode),
        [200, 200],
        'acknowledged, so Stripe stops retrying a credit that cannot succeed',
      );
      t.match(await orderRow(app, id), {
        status: 'failed',
        needsReview: true,
        reviewReason: 'balance_limit',
        paymentIntent: session.payment_intent,
        failureReason: /cannot take 1100 more/,
      });
      t.equal(await topups(app, id), 0);
      t.ok((await reviewList()).includes(id), 'listed for platform admins');
      expectStatus(await refunded(session, 999), 200, 'refunded in Stripe');
      t.match(
        await orderRow(app, id),
        { status: 'failed', amountRefunded: 999, needsReview: false },
        'a full refund settles the review',
      );
      t.notOk((await reviewList()).includes(id));
      t.equal(await balanceOf(app, fan), 2_147_483_647 - 1000, 'no coins moved');
      await empty();
    },
  );

  t.test('credited after review: one top-up, and a later refund takes it back as for any order', async (t) => {
    const id = (await checkout(app, fan, price.id)).json().data.orderId as string;
    await fill();
    const session = stripe.pay((await orderRow(app, id))?.providerRef as string);
    expectStatus(await completed(session), 200, 'paid into a full wallet');
    t.equal((await credit(id)).json().error?.code, 'balance_limit', 'still full: refused');
    await empty();
    expectStatus(await credit(id, fan), 403, 'a fan');
    expectStatus(await credit('no-such-order'), 404, 'an unknown order');
    const credits = await Promise.all([credit(id), credit(id)]);
    t.same(credits.map((res) => res.statusCode).sort(), [200, 409], 'twice at once: credited once');
    t.match(credits.find((res) => res.statusCode === 200)?.json().data, {
      status: 'fulfilled',
      needsReview: false,
      reviewReason: 'balance_limit',
    });
    t.equal(credits.find((res) => res.statusCode === 409)?.json().error.code, 'order_not_creditable');
    t.equal(await topups(app, id), 1);
    t.equal(await balanceOf(app, fan), 1100);
    expectStatus(await spend(app, 'fan-review', 600), 201, 'spend');
    expectStatus(await refunded(session, 999), 200, 'then refunded');
    t.equal(await balanceOf(app, fan), 0);
    t.match(
      await orderRow(app, id),
      { status: 'refunded', coinsReversed: 1100, uncollected: 600 },
      'the refund took back what it could',
    );
  });

  t.test(
    'a payment that does not match is judged by the charge: refunding what was paid settles it; it cannot be credited',
    async (t) => {
      const id = (await checkout(app, fan, price.id)).json().data.orderId as string;
      const paid = { ...stripe.pay((await orderRow(app, id))?.providerRef as string), amount_total: 500 };
      t.equal((await completed(paid)).statusCode, 200);
      t.match(await orderRow(app, id), {
        status: 'failed',
        needsReview: true,
        reviewReason: 'payment_mismatch',
        failureReason: /paid 500/,
      });
      t.equal((await credit(id)).json().error.code, 'order_not_creditable', 'refund it instead');
      expectStatus(await refunded(paid, 500), 200, 'the 500 paid, refunded in full');
      t.match(await orderRow(app, id), { needsReview: false, amountRefunded: 500 });
    },
  );

  t.test(
    'paid without a PaymentIntent, or after expiry, or disputed uncredited: listed; an admin clears them',
    async (t) => {
      const noIntent = (await checkout(app, fan, price.id)).json().data.orderId as string;
      t.equal(
        (
          await completed({
            ...stripe.pay((await orderRow(app, noIntent))?.providerRef as string),
            payment_intent: null,
          })
        ).statusCode,
        200,
      );
      t.match(await orderRow(app, noIntent), {
        status: 'failed',
        needsReview: true,
        reviewReason: 'no_payment_intent',
        failureReason: /PaymentIntent/,
      });

      const expired = (await checkout(app, fan, price.id)).json().data.orderId as string;
      const expiredSession = stripe.sessions.get((await orderRow(app, expired))?.providerRef as string);
      if (!expiredSession) throw new Error('no session');
      expectStatus(
        await deliver(app, stripe.event('checkout.session.expired', { ...expiredSession, status: 'expired' }).body),
        200,
        'expired',
      );
      const lateSession = stripe.pay(expiredSession.id);
      t.equal((await completed(lateSession)).statusCode, 200, 'then paid');
      t.match(await orderRow(app, expired), {
        status: 'expired',
        needsReview: true,
        reviewReason: 'paid_after_expiry',
        paymentIntent: lateSession.payment_intent,
      });
      t.equal(await balanceOf(app, fan), 0, 'none of them was credited');
      t.same((await reviewList()).sort(), [noIntent, expired].sort());

      const patch = (id: string, token: string, payload: object) =>
        app.inject({ method: 'PATCH', url: `/api/admin/orders/${id}`, headers: bearer(token), payload });
      expectStatus(await patch(expired, fan, { needsReview: false }), 403, 'a fan');
      expectStatus(await patch('no-such-order', ADMIN, { needsReview: false }), 404, 'an unknown order');
      expectStatus(await patch(expired, ADMIN, { needsReview: 'no' }), 400, 'not a boolean');
      expectStatus(await patch(expired, ADMIN, { needsReview: false, status: 'fulfilled' }), 400, 'another field');
      const cleared = await patch(expired, ADMIN, { needsReview: false });
      expectStatus(cleared, 200, 'cleared');
      t.match(cleared.json().data, { id: expired, status: 'expired', needsReview: false });
      expectStatus(await completed(lateSession), 200, 'the same payment delivered again');
      t.equal((await orderRow(app, expired))?.needsReview, false, 'does not flag it again');
      expectStatus(
        await deliver(app, stripe.event('charge.dispute.created', stripe.dispute(lateSession, 'needs_response')).body),
        200,
        'then disputed',
      );
      t.equal((await orderRow(app, expired))?.needsReview, true, 'a dispute of an uncredited payment flags it again');
      t.equal(await balanceOf(app, fan), 0);
      expectStatus(await refunded(lateSession, 999), 200, 'refunded in full');
      t.same(await reviewList(), [noIntent], 'the refund found the late payment and settled its review');
      t.same(await economyViolations(app), []);
    },
  );

  t.test('a won dispute cannot fill a wallet past its limit: what does not fit stays reversed, flagged', async (t) => {
    const { id, session } = await paidOrder(app, stripe, fan, price.id);
    expectStatus(
      await deliver(app, stripe.event('charge.dispute.created', stripe.dispute(session, 'needs_response')).body),
      200,
      'disputed',
    );
    await fill();
    const before = await balanceOf(app, fan);
    expectStatus(await spend(app, 'fan-review', -(2_147_483_647 - 100 - before)), 201, 'fill to 100 below the limit');
    expectStatus(
      await deliver(app, stripe.event('charge.dispute.closed', stripe.dispute(session, 'won')).body),
      200,
      'won, acknowledged',
    );
    t.equal(await balanceOf(app, fan), 2_147_483_647, 'as many as fit came back');
    t.match(await orderRow(app, id), {
      status: 'fulfilled',
      coinsReversed: 1000,
      needsReview: true,
      reviewReason: 'dispute_return_blocked',
    });
    t.same(await economyViolations(app), []);
  });
});

t.test(
  'order jobs take the least recently checked orders first: orders Stripe cannot settle do not starve newer ones',
  async (t) => {
    const { stripe, app, price, fan } = await checkoutSetup(t, 'fan-starving');
    const ids: string[] = [];
    for (let minutes = 10; minutes > 6; minutes -= 1) {
      const id = (await checkout(app, fan, price.id)).json().data.orderId as string;
      await app.db.orm
        .update(orders)
        .set({ createdAt: sql`now() - ${`${minutes} minutes`}::interval` })
        .where(eq(orders.id, id));
      ids.push(id);
    }
    const newest = ids[3] as string;
    stripe.pay((await orderRow(app, newest))?.providerRef as string);
    t.equal(await app.checkout.reconcileOrders(2), 0, 'the two oldest are still open at Stripe');
    t.equal(await app.checkout.reconcileOrders(2), 1, 'the next run moves on to the others and settles the paid one');
    t.equal((await orderRow(app, newest))?.status, 'fulfilled');
    t.ok((await orderRow(app, ids[0] as string))?.lastCheckedAt, 'each check is remembered');
  },
);

t.test('Stripe is not rate limited by address: a burst of deliveries is answered, not refused', async (t) => {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await buildTestApp(t, { ...stripe.env, RATE_LIMIT_MAX: '3' });
  const event = stripe.event('customer.created', { id: 'cus_1', object: 'customer' });
  const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(app, event.body)));
  t.same(
    answers.map((res) => res.statusCode),
    Array(10).fill(200),
  );
  t.equal((await app.inject({ method: 'GET', url: '/api/products' })).statusCode, 200);
  const limited = await Promise.all(
    Array.from({ length: 5 }, () => app.inject({ method: 'GET', url: '/api/products' })),
  );
  t.ok(
    limited.some((res) => res.statusCode === 429),
    'the rest of the API keeps its limit',
  );
});

t.test('a signed event whose object cannot be read: 500 and not recorded, so Stripe delivers it again', async (t) => {
  const { stripe, app, price, fan } = await checkoutSetup(t, 'fan-unreadable');
  const { id, session } = await paidOrder(app, stripe, fan, price.id);
  const before = await balanceOf(app, fan);
  const { amount_refunded: _, ...unreadable } = stripe.charge(session, 999) as Record<string, unknown>;
  const event = stripe.event('charge.refunded', unreadable);
  const recorded = async () =>
    (await app.db.orm.select().from(stripeEvents).where(eq(stripeEvents.id, event.id))).length;
  expectStatus(await deliver(app, event.body), 500, 'a charge without amount_refunded');
  t.equal(await recorded(), 0, 'the event is not recorded');
  t.equal(await balanceOf(app, fan), before, 'no coins moved');
  t.match(await orderRow(app, id), { status: 'fulfilled', amountRefunded: 0 });
  const readable = stripe.event('charge.refunded', stripe.charge(session, 999), event.id);
  expectStatus(await deliver(app, readable.body), 200, 'the same event, readable');
  t.equal(await recorded(), 1);
  t.equal(await balanceOf(app, fan), before - 1100, 'handled once it can be read');
  t.same(await economyViolations(app), []);
});
