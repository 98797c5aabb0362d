import { sql } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { bearer, buildTestApp, suiteServer } from '../../../support/app.js';
import { ADMIN, packInStatus } from '../../../support/catalog.js';
import { buyPack, economyViolations, expectStatus, type Fan, signIn, sqlRows } from '../../../support/economy.js';
import { deliver, type StripeStandIn, startStripeStandIn } from '../../../support/stripe.js';
import { staffedTeam } from '../../../support/teams.js';
import { drainDashboard, platformDashboard, teamDashboard } from './helpers.js';

/** The platform's dashboard: every team together, and money per currency as the orders hold it. */

async function post(app: App, url: string, payload: object, token = ADMIN) {
  const res = await app.inject({ method: 'POST', url, headers: bearer(token), payload });
  expectStatus(res, 201, url);
  return res.json().data;
}

/** An order of `priceId` paid through Stripe's webhook. */
async function paidOrder(app: App, stripe: StripeStandIn, fan: Fan, priceId: string) {
  const { orderId } = await post(app, '/api/checkout/sessions', { priceId }, fan.token);
  const [row] = await sqlRows<{ ref: string }>(app, sql`select provider_ref as ref from orders where id = ${orderId}`);
  const session = stripe.pay(row?.ref as string);
  expectStatus(await deliver(app, stripe.event('checkout.session.completed', session).body), 200, 'paid');
  return { orderId: orderId as string, session };
}

t.test(`the platform dashboard (${suiteServer})`, async (t) => {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await buildTestApp(t, stripe.env);
  const product = await post(app, '/api/admin/products', { name: 'coins', coins: 1000, bonusCoins: 0 });
  const usd = await post(app, `/api/admin/products/${product.id}/prices`, { currency: 'usd', unitAmount: 1000 });
  const eur = await post(app, `/api/admin/products/${product.id}/prices`, { currency: 'eur', unitAmount: 900 });
  const staff = await staffedTeam(app, 'plat');
  const teamPack = (
    await packInStatus(app, 'active', {
      pack: { teamId: staff.team.id, price: 600, cardsPerPack: 1 },
      pool: [{ quantity: 5 }],
    })
  ).pack;
  const platformPack = (
    await packInStatus(app, 'active', { pack: { price: 0, cardsPerPack: 1 }, pool: [{ quantity: 5 }] })
  ).pack;
  const alice = await signIn(app, 'plat-alice');
  const bob = await signIn(app, 'plat-bob');

  const refunded = await paidOrder(app, stripe, alice, usd.id);
  expectStatus(
    await deliver(app, stripe.event('charge.refunded', stripe.charge(refunded.session, 300)).body),
    200,
    'partly refunded',
  );
  await paidOrder(app, stripe, alice, eur.id);
  const disputed = await paidOrder(app, stripe, bob, usd.id);
  await buyPack(app, bob, teamPack.id);
  await buyPack(app, alice, platformPack.id);
  expectStatus(
    await deliver(app, stripe.event('charge.dispute.created', stripe.dispute(disputed.session, 'needs_response')).body),
    200,
    'disputed',
  );
  await drainDashboard(app);

  const res = await platformDashboard(app, ADMIN);
  expectStatus(res, 200, 'platform dashboard');
  const data = res.json().data;
  const orders = await sqlRows<{ currency: string; gross: number; refunded: number; uncollected: number }>(
    app,
    sql`select currency, sum(amount)::int as gross, sum(amount_refunded)::int as refunded, sum(uncollected)::int as uncollected
        from orders where status in ('fulfilled', 'refunded', 'disputed') group by 1 order by 1`,
  );
  t.same(
    orders.map((row) => row.currency),
    ['eur', 'usd'],
  );
  const usdOrders = orders.find((row) => row.currency === 'usd');
  t.same(data.money, [
    {
      currency: 'eur',
      orders: 1,
      gross: 900,
      refunded: 0,
      disputes: 0,
      disputed: 0,
      net: 900,
      coins: 1000,
      uncollectedCoins: 0,
    },
    {
      currency: 'usd',
      orders: 2,
      gross: usdOrders?.gross,
      refunded: usdOrders?.refunded,
      disputes: 1,
      disputed: 1000,
      net: 2000 - 300 - 1000,
      coins: 2000,
      uncollectedCoins: usdOrders?.uncollected,
    },
  ]);
  t.equal(usdOrders?.gross, 2000, 'a refund does not reduce what was taken: it is never counted as revenue');
  t.equal(usdOrders?.uncollected, 600, 'the coins bob spent before the dispute');
  t.match(data.totals, { packsSold: 2, coinsTaken: 600, uniqueBuyers: 2, packsOpened: 0 }, 'every team, and no team');
  const team = await teamDashboard(app, staff.viewer, staff.team.id);
  t.match(team.json().data.totals, { packsSold: 1, coinsTaken: 600, uniqueBuyers: 1 }, 'the team sees its own');
  t.notOk('money' in team.json().data, 'and no money');

  const past = (await platformDashboard(app, ADMIN, { from: '2020-01-01', to: '2020-02-01' })).json().data;
  t.same(past.money, [], 'no order was paid then');
  t.equal(past.totals.packsSold, 0);
  t.equal(past.series.length, 31);

  t.equal((await platformDashboard(app, staff.viewer)).statusCode, 403, 'a team viewer');
  t.equal((await platformDashboard(app, staff.owner)).statusCode, 403, 'a team owner');
  t.equal((await platformDashboard(app, alice.token)).statusCode, 403, 'a fan');
  t.equal((await platformDashboard(app, null)).statusCode, 401, 'no credentials');
  t.equal((await platformDashboard(app, ADMIN, { timeZone: 'Nowhere/Land' })).statusCode, 400, 'a bad zone');
  t.same(await economyViolations(app), [], 'every invariant holds');
});
