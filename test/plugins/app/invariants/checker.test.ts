import { sql } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { checkInvariants, INVARIANTS } from '../../../../plugins/app/invariants/checker.js';
import type { Database } from '../../../../plugins/app/database/index.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, applyAction, expectStatus, packInStatus } from '../../../support/catalog.js';
import { buyPack, fund, openPack, signIn, startPurchase } from '../../../support/economy.js';
import { deliver, startStripeStandIn } from '../../../support/stripe.js';

/**
 * The invariant checker on a database made through the API: every check holds, and each one
 * names the damage done to the state it guards (done in a transaction that is rolled back, with
 * triggers and foreign keys off, as only a bug or a hand edit could do it).
 */

class Rollback extends Error {}

/** What the checker reports after `damage`, seen inside the damaging transaction. */
async function reportAfter(app: App, damage: (tx: Database) => Promise<unknown>): Promise<Record<string, number>> {
  let report: Record<string, number> = {};
  await app.db
    .transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      await damage(tx);
      report = Object.fromEntries(
        (await checkInvariants(tx))
          .filter((result) => result.violations.length > 0)
          .map((result) => [result.name, result.violations.length]),
      );
      throw new Rollback();
    })
    .catch((error) => {
      if (!(error instanceof Rollback)) throw error;
    });
  return report;
}

const invariant = (words: string) => {
  const found = INVARIANTS.find((candidate) => candidate.name.includes(words));
  if (!found) throw new Error(`no invariant about "${words}"`);
  return found.name;
};

t.test('the invariant checker', async (t) => {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await buildTestApp(t, stripe.env);

  // State made as users make it: a pack sold and opened, a capped pack, an order paid and partly refunded.
  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 10, cardsPerPack: 2, supply: 10 },
    pool: [{ quantity: 6 }, { quantity: 4 }],
  });
  const capped = (
    await packInStatus(app, 'active', { pack: { price: 0, cardsPerPack: 1, maxPerUser: 2 }, pool: [{ quantity: 5 }] })
  ).pack;
  const fan = await signIn(app, 'fan-invariants');
  await fund(app, fan, 100);
  await buyPack(app, fan, pack.id);
  await buyPack(app, fan, pack.id);
  await buyPack(app, fan, capped.id);
  await buyPack(app, fan, capped.id);
  expectStatus(await openPack(app, fan, pack.id), 200, 'open');
  const product = (
    await app.inject({
      method: 'POST',
      url: '/api/admin/products',
      headers: bearer(ADMIN),
      payload: { name: 'coins', coins: 1000, bonusCoins: 0 },
    })
  ).json().data;
  const price = (
    await app.inject({
      method: 'POST',
      url: `/api/admin/products/${product.id}/prices`,
      headers: bearer(ADMIN),
      payload: { currency: 'usd', unitAmount: 1000 },
    })
  ).json().data;
  const orderId = (
    await app.inject({
      method: 'POST',
      url: '/api/checkout/sessions',
      headers: bearer(fan.token),
      payload: { priceId: price.id },
    })
  ).json().data.orderId as string;
  const sessionId = (
    (await app.db.orm.execute(sql`select provider_ref from orders where id = ${orderId}`)) as unknown as {
      rows: { provider_ref: string }[];
    }
  ).rows[0]?.provider_ref as string;
  const session = stripe.pay(sessionId);
  expectStatus(await deliver(app, stripe.event('checkout.session.completed', session).body), 200, 'paid');
  expectStatus(
    await deliver(app, stripe.event('charge.refunded', stripe.charge(session, 300)).body),
    200,
    'partly refunded',
  );
  // An App Store purchase, refunded after part of its coins were spent.
  const store = { provider: 'apple' as const, providerRef: 'apple-tx-invariants' };
  await app.checkout.fulfilStoreOrder({
    ...store,
    userId: fan.id,
    productId: product.id,
    coins: 1000,
    amount: 499,
    currency: 'usd',
    purchasedAt: new Date(),
  });
  await app.checkout.reverseStoreOrder({ ...store, reason: 'refunded' });
  const storeOrderId = (
    (await app.db.orm.execute(sql`select id from orders where provider_ref = 'apple-tx-invariants'`)) as unknown as {
      rows: { id: string }[];
    }
  ).rows[0]?.id as string;
  await applyAction(app, capped.id, { action: 'archive' });
  // A reservation left pending: the pack keeps a count of it (reserved = 1) against its supply.
  expectStatus(await startPurchase(app, fan, pack.id), 201, 'start a purchase left pending');

  const results = await checkInvariants(app.db.orm);
  t.same(
    results.filter((result) => result.violations.length > 0),
    [],
    'every invariant holds on state made through the API',
  );
  t.equal(results.length, INVARIANTS.length);

  // The optional fourth field: the damage trips that check alone, so it tells the two counts apart.
  const cases: [string, string, (tx: Database) => Promise<unknown>, 'alone'?][] = [
    [
      'a balance changed without its ledger',
      'every balance',
      (tx) => tx.execute(sql`update wallets set balance = balance + 1 where user_id = ${fan.id}`),
    ],
    [
      'an order credited without its top-up',
      'exactly one top-up',
      (tx) => tx.execute(sql`delete from wallet_ledger where kind = 'topup' and reference = ${orderId}`),
    ],
    [
      'a top-up for no order',
      'no top-up without',
      (tx) =>
        tx.execute(
          sql`update wallet_ledger set reference = 'no-such-order' where kind = 'topup' and reference = ${orderId}`,
        ),
    ],
    [
      'a refund recorded but never taken',
      'refunds and disputes took back',
      (tx) => tx.execute(sql`update orders set coins_reversed = coins_reversed + 10 where id = ${orderId}`),
    ],
    [
      'a serial past the edition',
      'within 1..editionSize',
      (tx) => tx.execute(sql`update pulls set serial_number = 1000000 where id = (select id from pulls limit 1)`),
    ],
    [
      'a serial given twice (with the unique constraint gone)',
      'given twice',
      (tx) =>
        tx.execute(
          sql`alter table pulls drop constraint pulls_collectible_serial_unique; insert into pulls select id || '-again', user_id, user_pack_id, pack_id, collectible_id, draw_index + 50, serial_number, created_at from pulls limit 1`,
        ),
    ],
    [
      'minted drifting from the pulls',
      'minted count is its pulls',
      (tx) =>
        tx.execute(
          sql`update collectibles set minted = minted + 1 where id = (select collectible_id from pulls limit 1)`,
        ),
    ],
    [
      'a serial state drifting',
      'serial state counts its pulls',
      (tx) => tx.execute(sql`update serial_states set allocated = allocated + 1 where pack_id = ${pack.id}`),
    ],
    [
      'copies appearing in a pool',
      'copies left plus those drawn',
      (tx) => tx.execute(sql`update pack_pool_entries set remaining = remaining + 1 where pack_id = ${pack.id}`),
    ],
    [
      'copies vanishing from a pool',
      'copies left plus those drawn',
      (tx) =>
        tx.execute(
          sql`update pack_pool_entries set remaining = remaining - 1 where pack_id = ${pack.id} and remaining > 0`,
        ),
    ],
    [
      'a pull that no pool gave',
      'copies left plus those drawn',
      (tx) =>
        tx.execute(
          sql`insert into pulls select id || '-extra', user_id, user_pack_id, pack_id, collectible_id, draw_index + 50, serial_number + 50, created_at from pulls where pack_id = ${pack.id} limit 1`,
        ),
    ],
    [
      'a pool entry without its audited change',
      'copies left plus those drawn',
      (tx) => tx.execute(sql`delete from audit_log where action = 'pack.addCollectible' and target_id = ${pack.id}`),
    ],
    [
      'a pool emptied under sold packs',
      'can fill the packs sold',
      (tx) => tx.execute(sql`update pack_pool_entries set remaining = 0 where pack_id = ${pack.id}`),
    ],
    // The database itself refuses sold > supply (a check constraint); a count drifting from the purchases is what could happen.
    [
      'a sale counted without its purchase',
      'past its supply',
      (tx) => tx.execute(sql`update packs set sold = sold + 1 where id = ${pack.id}`),
    ],
    // sold + reserved past the supply: refused by packs_reserved_check too, so the damage drops
    // it (rolled back with the rest) and lowers the supply, leaving both counts true.
    [
      'reservations past the supply (with the check constraint gone)',
      'sold or reserved past its supply',
      async (tx) => {
        await tx.execute(sql`alter table packs drop constraint packs_reserved_check`);
        return tx.execute(sql`update packs set supply = sold + reserved - 1 where id = ${pack.id} and reserved > 0`);
      },
      'alone',
    ],
    [
      'a store refund that left coins granted',
      'a refunded store order reversed all its coins',
      async (tx) => {
        await tx.execute(sql`delete from wallet_ledger where kind = 'refund' and reference = ${storeOrderId}`);
        return tx.execute(sql`update orders set coins_reversed = 0, uncollected = 0 where id = ${storeOrderId}`);
      },
    ],
    [
      'a reservation counted without its purchase',
      'kept count of reservations',
      (tx) => tx.execute(sql`update packs set reserved = reserved + 1 where id = ${pack.id}`),
      'alone',
    ],
    [
      'a count of reservations lost',
      'kept count of reservations',
      (tx) => tx.execute(sql`update packs set reserved = reserved - 1 where id = ${pack.id}`),
      'alone',
    ],
    [
      'a pending purchase whose reservation was not counted',
      'kept count of reservations',
      (tx) =>
        tx.execute(
          sql`insert into purchases (id, user_id, pack_id, status, price, server_seed, server_seed_hash, expires_at, created_at)
              select id || '-uncounted', user_id, pack_id, 'pending', price, server_seed, server_seed_hash, now() + interval '5 minutes', now()
              from purchases where pack_id = ${pack.id} and status = 'completed' limit 1`,
        ),
      'alone',
    ],
    [
      'a reservation ended without releasing its count',
      'kept count of reservations',
      (tx) =>
        tx.execute(
          sql`update purchases set status = 'cancelled', ended_at = now() where pack_id = ${pack.id} and status = 'pending'`,
        ),
      'alone',
    ],
    [
      'a purchase completed without its debit',
      'paid once, its price, by its buyer',
      (tx) =>
        tx.execute(
          sql`delete from wallet_ledger where kind = 'purchase' and reference = (select id from purchases where pack_id = ${pack.id} and status = 'completed' limit 1)`,
        ),
    ],
    [
      'a purchase paid twice',
      'paid once, its price, by its buyer',
      (tx) =>
        tx.execute(
          sql`insert into wallet_ledger select id || '-again', user_id, seq + 1000, seq + 999, balance_after, amount, balance_after + amount, kind, reference, reason, actor_id, created_at from wallet_ledger where kind = 'purchase' limit 1`,
        ),
    ],
    [
      'a purchase debited from another wallet',
      'paid once, its price, by its buyer',
      (tx) => tx.execute(sql`update wallet_ledger set user_id = 'someone-else' where kind = 'purchase'`),
    ],
    [
      'a purchase debited the wrong price',
      'paid once, its price, by its buyer',
      (tx) =>
        tx.execute(sql`update purchases set price = price + 1 where pack_id = ${pack.id} and status = 'completed'`),
      'alone',
    ],
    [
      'a debit for a purchase never completed',
      'paid once, its price, by its buyer',
      (tx) =>
        tx.execute(
          sql`update purchases set status = 'pending', completed_at = null where id = (select reference from wallet_ledger where kind = 'purchase' limit 1)`,
        ),
    ],
    [
      'an owned pack given to another fan',
      "purchase's buyer's",
      (tx) =>
        tx.execute(
          sql`update user_packs set user_id = 'someone-else' where id = (select id from user_packs where opened_at is null limit 1)`,
        ),
      'alone',
    ],
    [
      'a purchase past maxPerUser',
      'maxPerUser in force',
      (tx) =>
        tx.execute(
          sql`update audit_log set after = jsonb_set(after, '{maxPerUser}', '1') where target_id = ${capped.id} and after ? 'maxPerUser'`,
        ),
    ],
    [
      'an opened pack losing its pulls',
      'holds cardsPerPack pulls',
      (tx) => tx.execute(sql`delete from pulls where id = (select id from pulls limit 1)`),
    ],
    [
      'a stored result that its proof does not give',
      'recomputable from its proof',
      (tx) => tx.execute(sql`update pack_opens set result = jsonb_set(result, '{fairness,draws,0,u}', '0.5')`),
    ],
    [
      'a seed swapped after the purchase',
      'recomputable from its proof',
      (tx) =>
        tx.execute(
          sql`update purchases set server_seed = repeat('0', 64) where id in (select purchase_id from user_packs where opened_at is not null)`,
        ),
    ],
    [
      'a state change without its audit row',
      'state change has its audit row',
      (tx) => tx.execute(sql`delete from audit_log where action = 'pack.archive'`),
    ],
  ];
  for (const [what, words, damage, alone] of cases) {
    const report = await reportAfter(app, damage);
    t.ok(report[invariant(words)], `${what}: reported as "${invariant(words)}"`, { report });
    if (alone) t.same(Object.keys(report), [invariant(words)], `${what}: and by no other check`);
  }

  // The kept count holds reservations past their expiry until something reclaims them: a pending
  // purchase that lapsed is still counted, and is no violation.
  t.same(
    await reportAfter(app, (tx) =>
      tx.execute(
        sql`update purchases set expires_at = now() - interval '1 minute' where pack_id = ${pack.id} and status = 'pending'`,
      ),
    ),
    {},
    'a lapsed pending purchase, not yet reclaimed, still counts as reserved',
  );
  const constraint = (await app.db.orm.execute(
    sql`select count(*)::int as n from pg_constraint where conname = 'packs_reserved_check'`,
  )) as unknown as {
    rows: { n: number }[];
  };
  t.equal(constraint.rows[0]?.n, 1, 'the dropped check constraint is back with the rollback');
  t.same(
    (await checkInvariants(app.db.orm)).filter((result) => result.violations.length > 0),
    [],
    'and every damage was rolled back',
  );
});
