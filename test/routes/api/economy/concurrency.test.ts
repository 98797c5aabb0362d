import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import type { App } from '../../../../app.js';
import { bearer, buildTestApp, createTestDatabase, suiteServer } from '../../../support/app.js';
import { ADMIN, packInStatus } from '../../../support/catalog.js';
import {
  adjust,
  balance,
  buyPack,
  cancelPurchase,
  completePurchase,
  assertNoViolations,
  errorCode,
  type Fan,
  fund,
  openPack,
  purchaseStatuses,
  salesOf,
  signIn,
  sqlRows,
  startPurchase,
} from '../../../support/economy.js';
import { holdLock, someoneWaitsForALock } from '../../../support/locks.js';

/**
 * The economy under concurrent requests (both databases): racing buyers never oversell a pack,
 * expired reservations free their pack without a job (and one expiring while its complete waits
 * for a lock is still sold once), maxPerUser and the balance hold when one
 * fan sends many requests at once, an owned pack opens once, an Idempotency-Key makes one change,
 * and the same holds across two instances sharing one database. Every outcome is checked with
 * exact counts, and the invariants of the economy (support/economy.ts) after every case.
 */

interface LedgerEntry {
  id: string;
  amount: number;
  balanceAfter: number;
  kind: string;
  reference: string | null;
}

/** The instance that serves the i-th request: requests alternate between the apps. */
const pick = (apps: App[], i: number): App => apps[i % apps.length] as App;

function countBy<T>(items: T[], keyOf: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[keyOf(item)] = (counts[keyOf(item)] ?? 0) + 1;
  return counts;
}

/** How many responses had each outcome: `201`, or `409 sold_out` for an error with its code. */
const tally = (responses: LightMyRequestResponse[]) =>
  countBy(responses, (res) => (res.statusCode < 400 ? String(res.statusCode) : `${res.statusCode} ${errorCode(res)}`));

/** A promise and the function that resolves it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

async function ledger(app: App, fan: Fan): Promise<LedgerEntry[]> {
  const res = await app.inject({
    method: 'GET',
    url: '/api/wallet/transactions',
    query: { limit: '200' },
    headers: bearer(fan.token),
  });
  if (res.statusCode !== 200) throw new Error(`ledger: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

/** `fn` over `0..count-1`, at most `limit` at a time (fixtures: the races are what runs all at once). */
async function mapLimit<T>(count: number, limit: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) results[i] = await fn(i);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}

/** `count` signed-in fans, each credited with `coins` (when above 0). */
function fans(app: App, prefix: string, count: number, coins = 0): Promise<Fan[]> {
  return mapLimit(count, 8, async (i) => {
    const fan = await signIn(app, `${prefix}-${i}`);
    if (coins > 0) await fund(app, fan, coins);
    return fan;
  });
}

/** Case 1: 200 funded buyers race for the 50 packs a pool can fill. */
async function soldOutRace(t: Test, apps: App[], prefix: string): Promise<void> {
  const app = apps[0] as App;
  const { pack } = await packInStatus(app, 'active', {
    pack: { name: `${prefix} drop`, price: 10, cardsPerPack: 1 },
    pool: [{ quantity: 50 }],
  });
  t.equal(pack.available, 50, 'the pool fills 50 packs');
  const buyers = await fans(app, prefix, 200, 10);

  const started = await Promise.all(buyers.map((fan, i) => startPurchase(pick(apps, i), fan, pack.id)));
  t.same(tally(started), { 201: 50, '409 sold_out': 150 }, 'exactly 50 reservations, 150 sold_out');
  t.equal((await salesOf(app, pack.id)).available, 0, 'every pack is reserved');

  const winners = buyers.flatMap((fan, i) =>
    (started[i] as LightMyRequestResponse).statusCode === 201
      ? [{ fan, purchaseId: started[i]?.json().data.id as string }]
      : [],
  );
  t.equal(new Set(winners.map((winner) => winner.purchaseId)).size, 50, '50 distinct purchases');
  const completed = await Promise.all(
    winners.map(({ fan, purchaseId }, i) => completePurchase(pick(apps, i + 1), fan, pack.id, { purchaseId })),
  );
  t.same(tally(completed), { 200: 50 }, 'all 50 complete');

  const sales = await salesOf(app, pack.id);
  t.equal(sales.sold, 50, 'sold = 50');
  t.equal(sales.available, 0, 'admin view: available = 0');
  for (const [i, instance] of apps.entries()) {
    const detail = await instance.inject({ method: 'GET', url: `/api/packs/${pack.id}` });
    t.equal(detail.statusCode, 200);
    t.equal(detail.json().data.pack.available, 0, `public view (instance ${i + 1}): available = 0`);
  }
  t.same(await purchaseStatuses(app, pack.id), { completed: 50 }, 'the losers left no purchase behind');
  const [paid] = await sqlRows<{ entries: number; total: number }>(
    app,
    sql`select count(*)::int as entries, coalesce(sum(amount), 0)::int as total from wallet_ledger where kind = 'purchase' and user_id like ${`${prefix}-%`}`,
  );
  t.same(paid, { entries: 50, total: -500 }, 'the winners paid 10 each, once');
  const balances = await sqlRows<{ balance: number; fans: number }>(
    app,
    sql`select balance, count(*)::int as fans from wallets where user_id like ${`${prefix}-%`} group by balance order by balance`,
  );
  t.same(
    balances,
    [
      { balance: 0, fans: 50 },
      { balance: 10, fans: 150 },
    ],
    '50 wallets emptied, 150 untouched',
  );
  const late = await startPurchase(app, buyers[0] as Fan, pack.id);
  t.same([late.statusCode, errorCode(late)], [409, 'sold_out'], 'a late buyer finds it sold out');
  await assertNoViolations(t, app);
}

/**
 * Case 4: one fan whose balance covers 10 packs completes 50 reservations at once. They are spread
 * over 5 packs of one price, so what serializes the debits is the wallet's lock, not a pack's.
 */
async function balanceRace(t: Test, apps: App[], prefix: string): Promise<void> {
  const app = apps[0] as App;
  const price = 10;
  const packIds: string[] = [];
  for (let p = 0; p < 5; p++) {
    const { pack } = await packInStatus(app, 'active', {
      pack: { name: `${prefix} pack ${p}`, price, cardsPerPack: 1 },
      pool: [{ quantity: 20 }],
    });
    packIds.push(pack.id);
  }
  const packOf = (i: number) => packIds[i % packIds.length] as string;
  const [fan] = (await fans(app, prefix, 1, 10 * price)) as [Fan];

  const started = await Promise.all(Array.from({ length: 50 }, (_, i) => startPurchase(pick(apps, i), fan, packOf(i))));
  t.same(tally(started), { 201: 50 }, '50 reservations');
  const purchaseIds = started.map((res) => res.json().data.id as string);

  const completed = await Promise.all(
    purchaseIds.map((purchaseId, i) => completePurchase(pick(apps, i + 1), fan, packOf(i), { purchaseId })),
  );
  t.same(tally(completed), { 200: 10, '409 insufficient_funds': 40 }, 'exactly 10 paid, 40 insufficient_funds');
  t.equal(await balance(app, fan), 0, 'balance 0');

  const entries = await ledger(app, fan);
  t.same(
    countBy(entries, (entry) => entry.kind),
    { adjustment: 1, purchase: 10 },
    'the ledger: 1 adjustment + 10 purchases',
  );
  const paid = completed.flatMap((res, i) => (res.statusCode === 200 ? [i] : []));
  t.same(
    entries
      .filter((entry) => entry.kind === 'purchase')
      .map((entry) => entry.reference)
      .sort(),
    paid.map((i) => purchaseIds[i]).sort(),
    'one purchase entry per completed purchase',
  );
  t.ok(
    entries.every((entry) => entry.kind !== 'purchase' || entry.amount === -price),
    'each purchase entry debits the price',
  );

  const packs = await Promise.all(packIds.map((id) => salesOf(app, id)));
  t.equal(
    packs.reduce((sum, pack) => sum + pack.sold, 0),
    10,
    'sold = 10 over the packs',
  );
  t.equal(
    packs.reduce((sum, pack) => sum + pack.available, 0),
    100 - 10 - 40,
    'the 40 refused purchases still hold their packs',
  );
  const statuses = await sqlRows<{ status: string; count: number }>(
    app,
    sql`select status, count(*)::int as count from purchases where user_id = ${fan.id} group by status order by status`,
  );
  t.same(
    statuses,
    [
      { status: 'completed', count: 10 },
      { status: 'pending', count: 40 },
    ],
    'the refused purchases stay pending',
  );

  // A refused purchase can still be completed once the wallet covers it; 20 completes of it at once pay once.
  await fund(app, fan, price);
  const refused = purchaseIds.findIndex((_, i) => !paid.includes(i));
  const refusedId = purchaseIds[refused] as string;
  const retried = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      completePurchase(pick(apps, i), fan, packOf(refused), { purchaseId: refusedId }),
    ),
  );
  t.same(tally(retried), { 200: 20 }, 'a refused purchase completes after a credit, 20 times the same answer');
  t.equal(new Set(retried.map((res) => res.json().data.userPack.id)).size, 1, 'one owned pack');
  t.equal(await balance(app, fan), 0, 'paid once: balance 0 again');
  t.equal(
    (await ledger(app, fan)).filter((entry) => entry.reference === refusedId).length,
    1,
    'one ledger entry for it',
  );
  await assertNoViolations(t, app);
}

/** Case 5: one owned pack opened 20 times at once; and 20 opens without userPackId for 2 owned packs. */
async function openRace(t: Test, apps: App[], prefix: string): Promise<void> {
  const app = apps[0] as App;
  const cardsPerPack = 3;
  const { pack } = await packInStatus(app, 'active', {
    pack: { name: `${prefix} pack`, price: 0, cardsPerPack },
    pool: [{ quantity: 6 }, { quantity: 6, weight: 2 }, { quantity: 6, weight: 3 }],
  });
  const [fan] = (await fans(app, prefix, 1)) as [Fan];
  const { userPackId } = await buyPack(app, fan, pack.id);

  const opened = await Promise.all(
    Array.from({ length: 20 }, (_, i) => openPack(pick(apps, i), fan, pack.id, { userPackId })),
  );
  t.same(tally(opened), { 200: 20 }, 'all 20 answer 200');
  const first = opened.find((res) => res.statusCode === 200)?.json() ?? { data: {} };
  t.equal(first.data.userPackId, userPackId);
  t.equal(first.data.items?.length, cardsPerPack, 'cardsPerPack items');
  t.equal(
    opened.filter((res) => !isDeepStrictEqual(res.json(), first)).length,
    0,
    'every answer deep-equals the first',
  );
  const stored = await app.inject({
    method: 'GET',
    url: `/api/locker-room/opens/${userPackId}`,
    headers: bearer(fan.token),
  });
  t.same(stored.json().data, first.data, 'the stored result is the answer');

  const [pulled] = await sqlRows<{ pulls: number; serials: number }>(
    app,
    sql`select count(*)::int as pulls, count(distinct (collectible_id, serial_number))::int as serials from pulls where user_pack_id = ${userPackId}`,
  );
  t.same(pulled, { pulls: cardsPerPack, serials: cardsPerPack }, 'exactly cardsPerPack pulls, distinct serials');
  const locker = await app.inject({
    method: 'GET',
    url: '/api/locker-room/collectibles',
    query: { limit: '200' },
    headers: bearer(fan.token),
  });
  t.equal(locker.json().data.length, cardsPerPack, 'the locker room holds cardsPerPack copies');
  const sales = await salesOf(app, pack.id);
  t.same([sales.sold, sales.opened], [1, 1], 'sold 1, opened once');

  // Without userPackId: each open takes the oldest unopened pack; two packs open, the rest find none.
  const owned = [await buyPack(app, fan, pack.id), await buyPack(app, fan, pack.id)].map((bought) => bought.userPackId);
  const blind = await Promise.all(Array.from({ length: 20 }, (_, i) => openPack(pick(apps, i), fan, pack.id)));
  t.same(tally(blind), { 200: 2, '404 no_unopened_pack': 18 }, 'two opens, 18 no_unopened_pack');
  t.same(
    blind
      .filter((res) => res.statusCode === 200)
      .map((res) => res.json().data.userPackId)
      .sort(),
    [...owned].sort(),
    'each owned pack opened once',
  );
  t.same((await salesOf(app, pack.id)).opened, 3, 'opened = 3');
  await assertNoViolations(t, app);
}

t.test(`200 concurrent buyers for 50 packs: exactly 50 sold (${suiteServer})`, async (t) => {
  const app = await buildTestApp(t);
  await soldOutRace(t, [app], 'buyer');
});

t.test('expired reservations free their pack without a job; the cron endpoint marks them', async (t) => {
  // Long enough that the steps meant to run before an expiry do so even on a loaded machine.
  const ttlMs = 1000;
  const cronSecret = 'cron-secret-0123456789abcdef';
  const app = await buildTestApp(t, { PURCHASE_TTL: `${ttlMs} ms`, CRON_SECRET: cronSecret, CRON_INTERNAL: 'false' });
  const { pack } = await packInStatus(app, 'active', { pack: { price: 10, cardsPerPack: 1 }, pool: [{ quantity: 2 }] });
  const buyers = await fans(app, 'ttl', 5, 10);
  const [f0, f1, f2, f3, f4] = buyers as [Fan, Fan, Fan, Fan, Fan];
  /** Waits until every purchase answered has expired (by the app's clock, which is this one). */
  const expiryOf = async (responses: LightMyRequestResponse[]) => {
    const last = Math.max(...responses.map((res) => Date.parse(res.json().data.expiresAt)));
    await sleep(Math.max(0, last - Date.now() + 50));
  };

  const first = await Promise.all([startPurchase(app, f0, pack.id), startPurchase(app, f1, pack.id)]);
  t.same(tally(first), { 201: 2 }, 'two fans reserve both packs');
  const refused = await startPurchase(app, f2, pack.id);
  t.same([refused.statusCode, errorCode(refused)], [409, 'sold_out'], 'a third is sold out');
  const expiresAt = first[0]?.json().data.expiresAt as string;
  t.ok(
    Date.parse(expiresAt) - Date.parse(first[0]?.json().data.createdAt) === ttlMs,
    'expiresAt is createdAt + PURCHASE_TTL',
  );

  await expiryOf(first);
  t.equal((await salesOf(app, pack.id)).available, 2, 'expired reservations hold nothing');
  t.same(await purchaseStatuses(app, pack.id), { pending: 2 }, 'no job has marked them');
  const second = await Promise.all([startPurchase(app, f2, pack.id), startPurchase(app, f3, pack.id)]);
  t.same(tally(second), { 201: 2 }, 'two other fans now reserve both packs');
  t.same(
    await purchaseStatuses(app, pack.id),
    { expired: 2, pending: 2 },
    'the starts reclaimed the expired reservations on their way',
  );
  const again = await startPurchase(app, f4, pack.id);
  t.same([again.statusCode, errorCode(again)], [409, 'sold_out'], 'and the pack is sold out again');

  const late = await completePurchase(app, f0, pack.id, { purchaseId: first[0]?.json().data.id });
  t.same(
    [late.statusCode, errorCode(late)],
    [409, 'purchase_expired'],
    'completing an expired purchase: purchase_expired',
  );
  const lateCancel = await cancelPurchase(app, f1, pack.id, first[1]?.json().data.id);
  t.same([lateCancel.statusCode, errorCode(lateCancel)], [409, 'purchase_expired'], 'cancelling one: purchase_expired');
  t.equal(await balance(app, f0), 10, 'nothing was debited');

  // The cron endpoint: only the exact secret.
  const cron = (headers: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/api/cron/expire-purchases', headers });
  const wrongSecret = cronSecret.replace(/.$/, (last) => (last === 'x' ? 'y' : 'x'));
  t.equal(wrongSecret.length, cronSecret.length);
  for (const [what, headers] of [
    ['a wrong secret of the same length', { authorization: `Bearer ${wrongSecret}` }],
    ['no Authorization header', {}],
    ['a secret of another length', { authorization: `Bearer ${cronSecret}-and-more` }],
    ['a prefix of the secret', { authorization: `Bearer ${cronSecret.slice(0, 16)}` }],
    ['an admin token', bearer(ADMIN)],
    ['the secret without Bearer', { authorization: cronSecret }],
  ] as const) {
    const res = await cron(headers);
    t.same([res.statusCode, errorCode(res)], [401, 'invalid_cron_secret'], `401 invalid_cron_secret: ${what}`);
  }

  await expiryOf(second);
  t.same(await purchaseStatuses(app, pack.id), { expired: 2, pending: 2 }, 'refused cron calls changed nothing');
  const run = await cron({ authorization: `Bearer ${cronSecret}` });
  t.equal(run.statusCode, 200);
  t.same(
    run.json(),
    { success: true, data: { job: 'expire-purchases', processed: 2, expired: 2 } },
    'the job marks the 2 expired purchases left',
  );
  t.same(await purchaseStatuses(app, pack.id), { expired: 4 });
  t.same(
    (await cron({ authorization: `Bearer ${cronSecret}` })).json().data,
    { job: 'expire-purchases', processed: 0, expired: 0 },
    'a second run finds none',
  );
  const afterJob = await completePurchase(app, f0, pack.id, { purchaseId: first[0]?.json().data.id });
  t.same([afterJob.statusCode, errorCode(afterJob)], [409, 'purchase_expired'], 'still purchase_expired once marked');
  t.equal((await salesOf(app, pack.id)).available, 2);
  await assertNoViolations(t, app);
});

t.test('a reservation that expires while its complete waits for a lock is sold once', async (t) => {
  const ttlMs = 1000;
  const app = await buildTestApp(t, { PURCHASE_TTL: `${ttlMs} ms`, CRON_INTERNAL: 'false' });
  const lockWaiters = async () =>
    (
      await sqlRows<{ n: number }>(
        app,
        sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      )
    )[0]?.n ?? 0;
  /** Polls until `done()`; fails after 10 s. */
  const waitUntil = async (what: string, done: () => Promise<boolean>) => {
    for (const deadline = Date.now() + 10_000; !(await done()); await sleep(10)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    }
  };

  // Another transaction holds a row the complete needs: the pack's (a queue of buyers holds it)
  // or the fan's wallet (the fan's other purchases or an adjustment hold it).
  const variants = [
    {
      name: 'the pack row',
      lock: (packId: string, _fan: Fan) => sql`select id from packs where id = ${packId} for update`,
    },
    {
      name: 'the wallet row',
      lock: (_packId: string, fan: Fan) => sql`select user_id from wallets where user_id = ${fan.id} for update`,
    },
  ];
  for (const [v, variant] of variants.entries()) {
    t.test(`while another transaction holds ${variant.name}`, async (t) => {
      const { pack } = await packInStatus(app, 'active', {
        pack: { name: `Expiring ${v}`, price: 10, cardsPerPack: 1 },
        pool: [{ quantity: 1 }],
      });
      const [holder, rival] = (await fans(app, `expiring-${v}`, 2, 10)) as [Fan, Fan];
      const reserved = await startPurchase(app, holder, pack.id);
      t.equal(reserved.statusCode, 201, 'the only pack is reserved');
      const expiresAt = Date.parse(reserved.json().data.expiresAt);

      const locked = deferred();
      const released = deferred();
      // Runs before the app's teardown: a failed assertion never leaves the lock held.
      t.teardown(() => released.resolve());
      const lockHolder = app.db.orm.transaction(async (tx) => {
        await tx.execute(variant.lock(pack.id, holder));
        locked.resolve();
        await released.promise;
      });
      await locked.promise;
      // The holder's complete starts before the expiry and waits for the lock. The reservation then
      // expires, and a rival starts a purchase of the same pack (it may queue behind, or not).
      // (inject answers a lazy thenable: Promise.resolve sends the request now.)
      const completion = Promise.resolve(
        completePurchase(app, holder, pack.id, { purchaseId: reserved.json().data.id }),
      );
      await waitUntil('the complete waits for the lock', async () => (await lockWaiters()) === 1);
      t.ok(Date.now() < expiresAt, 'the complete was under way before the reservation expired');
      await sleep(Math.max(0, expiresAt - Date.now() + 50));
      let rivalAnswered = false;
      const rivalStart = Promise.resolve(startPurchase(app, rival, pack.id)).then((res) => {
        rivalAnswered = true;
        return res;
      });
      await waitUntil('the rival answers or waits too', async () => rivalAnswered || (await lockWaiters()) === 2);
      released.resolve();
      await lockHolder;
      const [completed, rivalRes] = await Promise.all([completion, rivalStart]);

      const outcome = (res: LightMyRequestResponse) => `${res.statusCode} ${errorCode(res) ?? ''}`.trim();
      t.equal(
        [completed, rivalRes].filter((res) => res.statusCode < 300).length,
        1,
        `one pack, one buyer (complete: ${outcome(completed)}; rival's start: ${outcome(rivalRes)})`,
      );
      const [holding] = await sqlRows<{ n: number }>(
        app,
        sql`select count(*)::int as n from purchases where pack_id = ${pack.id} and (status = 'completed' or (status = 'pending' and expires_at > ${new Date().toISOString()}))`,
      );
      t.equal(holding?.n, 1, 'one purchase (completed or live) holds the only pack');

      // What was sold can be opened: complete what is still pending, then open every owned pack.
      const byId = new Map([holder, rival].map((fan) => [fan.id, fan]));
      const pending = await sqlRows<{ id: string; user_id: string }>(
        app,
        sql`select id, user_id from purchases where pack_id = ${pack.id} and status = 'pending'`,
      );
      for (const purchase of pending)
        await completePurchase(app, byId.get(purchase.user_id) as Fan, pack.id, { purchaseId: purchase.id });
      const owned = await sqlRows<{ id: string; user_id: string }>(
        app,
        sql`select id, user_id from user_packs where pack_id = ${pack.id}`,
      );
      const opens = [];
      for (const userPack of owned)
        opens.push(await openPack(app, byId.get(userPack.user_id) as Fan, pack.id, { userPackId: userPack.id }));
      t.same(tally(opens), { 200: 1 }, 'one pack sold, and it opens');
      await assertNoViolations(t, app);
    });
  }
});

t.test('maxPerUser holds under 10 concurrent starts by one fan', async (t) => {
  const app = await buildTestApp(t, { PURCHASE_RATE_LIMIT: '100' });
  const { pack } = await packInStatus(app, 'active', {
    pack: { maxPerUser: 3, price: 0, cardsPerPack: 1 },
    pool: [{ quantity: 100 }],
  });
  const [fan, other] = (await fans(app, 'limited', 2)) as [Fan, Fan];

  const started = await Promise.all(Array.from({ length: 10 }, () => startPurchase(app, fan, pack.id)));
  t.same(tally(started), { 201: 3, '409 purchase_limit_reached': 7 }, 'exactly 3 reservations');
  t.same(await purchaseStatuses(app, pack.id), { pending: 3 });
  const held = started.filter((res) => res.statusCode === 201).map((res) => res.json().data.id as string);

  const cancelled = await cancelPurchase(app, fan, pack.id, held[0] as string);
  t.equal(cancelled.statusCode, 200);
  t.equal(cancelled.json().data.status, 'cancelled');
  const after = await Promise.all(Array.from({ length: 5 }, () => startPurchase(app, fan, pack.id)));
  t.same(tally(after), { 201: 1, '409 purchase_limit_reached': 4 }, 'a cancellation frees exactly one more');

  const completed = await completePurchase(app, fan, pack.id, { purchaseId: held[1] as string });
  t.equal(completed.statusCode, 200, 'completing one');
  const still = await startPurchase(app, fan, pack.id);
  t.same([still.statusCode, errorCode(still)], [409, 'purchase_limit_reached'], 'a completed purchase still counts');
  const others = await startPurchase(app, other, pack.id);
  t.equal(others.statusCode, 201, 'the limit is per fan');
  const sales = await salesOf(app, pack.id);
  t.same([sales.sold, sales.available], [1, 100 - 1 - 3], 'sold 1; 3 pending');
  await assertNoViolations(t, app);
});

t.test('a start that waited for an open counts the copies that open took', async (t) => {
  // A start locks the pack's row, then counts the pool's copies. An open holding that lock takes
  // copies out of the pool and counts the pack opened; a start that waited for it must see both,
  // or it counts the pack opened with the copies still there, and sells a pack nobody can fill.
  const app = await buildTestApp(t, { PURCHASE_RATE_LIMIT: '100' });
  const { pack } = await packInStatus(app, 'active', { pack: { price: 0, cardsPerPack: 5 }, pool: [{ quantity: 10 }] });
  const [owner, late] = (await fans(app, 'open-then-start', 2)) as [Fan, Fan];
  const bought = [await buyPack(app, owner, pack.id), await buyPack(app, owner, pack.id)];
  t.equal((await salesOf(app, pack.id)).available, 0, 'two packs of 5 sold from 10 copies: none left');

  // The open takes the pack's lock, then waits for its owner's row, which this test holds.
  const ownerRow = await holdLock(app, sql`select 1 from users where id = ${owner.id} for update`);
  let opened: Promise<LightMyRequestResponse> | undefined;
  let start: Promise<LightMyRequestResponse> | undefined;
  try {
    opened = Promise.resolve(openPack(app, owner, pack.id, { userPackId: bought[0]?.userPackId }));
    await someoneWaitsForALock(app);
    start = Promise.resolve(startPurchase(app, late, pack.id));
    for (const deadline = Date.now() + 10_000; ; await sleep(10)) {
      const [waiting] = await sqlRows<{ n: number }>(
        app,
        sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if ((waiting?.n ?? 0) >= 2) break;
      if (Date.now() > deadline) throw new Error('the start never waited for the pack');
    }
  } finally {
    await ownerRow.release();
  }
  t.equal((await opened)?.statusCode, 200, 'the open is drawn');
  const answer = (await start) as LightMyRequestResponse;
  t.same(
    [answer.statusCode, errorCode(answer)],
    [409, 'sold_out'],
    'the start finds nothing to sell: 5 copies left fill the one unopened pack',
  );
  await assertNoViolations(t, app);
});

t.test('a purchase start does not wait for a transaction that only references the pack', async (t) => {
  // A complete inserts the owned pack, which takes a key share lock on the pack's row (its foreign
  // key), before it counts the sale. Starts that waited for that lock deadlocked with completes
  // under load: each deadlock stalled every buyer of the pack for deadlock_timeout (1 s).
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', { pack: { price: 0, cardsPerPack: 1 }, pool: [{ quantity: 10 }] });
  const [fan] = (await fans(app, 'key-share', 1)) as [Fan];
  const referencing = await holdLock(app, sql`select 1 from packs where id = ${pack.id} for key share`);
  try {
    const started = await Promise.race([startPurchase(app, fan, pack.id), sleep(3000).then(() => undefined)]);
    t.equal(started?.statusCode, 201, 'started while the key share lock is held, without waiting for it');
  } finally {
    await referencing.release();
  }
  await assertNoViolations(t, app);
});

t.test('50 parallel completes from a balance that covers 10', async (t) => {
  const app = await buildTestApp(t, { PURCHASE_RATE_LIMIT: '1000' });
  await balanceRace(t, [app], 'spender');
});

t.test('one owned pack opened 20 times at once opens once', async (t) => {
  const app = await buildTestApp(t);
  await openRace(t, [app], 'opener');
});

t.test('one Idempotency-Key sent 20 times at once makes one change', async (t) => {
  const app = await buildTestApp(t, { PURCHASE_RATE_LIMIT: '100' });
  const [fan] = (await fans(app, 'idem', 1)) as [Fan];

  /** 201s and 409 idempotency_key_in_use only; one first answer, the rest replays of it. */
  const checkRace = (t: Test, responses: LightMyRequestResponse[], what: string): string => {
    const counts = tally(responses);
    t.same(
      Object.keys(counts).filter((key) => key !== '201' && key !== '409 idempotency_key_in_use'),
      [],
      `${what}: only 201 and 409 idempotency_key_in_use (${JSON.stringify(counts)})`,
    );
    const created = responses.filter((res) => res.statusCode === 201);
    t.ok(created.length >= 1, `${what}: at least one 201`);
    t.equal(
      created.filter((res) => res.headers['idempotent-replayed'] === undefined).length,
      1,
      `${what}: one first answer`,
    );
    t.ok(
      created.every(
        (res) => res.headers['idempotent-replayed'] === undefined || res.headers['idempotent-replayed'] === 'true',
      ),
      `${what}: the others are replays`,
    );
    const firstBody = created[0]?.json();
    t.equal(
      created.filter((res) => !isDeepStrictEqual(res.json(), firstBody)).length,
      0,
      `${what}: every 201 answers the same body`,
    );
    return firstBody?.data?.id as string;
  };

  t.test('admin wallet adjustment', async (t) => {
    const key = randomUUID();
    const body = { amount: 25, reason: 'goodwill' };
    const raced = await Promise.all(
      Array.from({ length: 20 }, () => adjust(app, fan.id, body, { 'idempotency-key': key })),
    );
    const entryId = checkRace(t, raced, 'adjustments');
    const entries = await ledger(app, fan);
    t.equal(entries.length, 1, 'exactly one ledger entry');
    t.equal(entries[0]?.id, entryId);
    t.equal(await balance(app, fan), 25, 'credited once');

    const reused = await adjust(app, fan.id, { ...body, amount: 26 }, { 'idempotency-key': key });
    t.same([reused.statusCode, errorCode(reused)], [422, 'idempotency_key_reused'], 'the key with another body: 422');
    const retry = await adjust(app, fan.id, body, { 'idempotency-key': key });
    t.equal(retry.statusCode, 201);
    t.equal(retry.headers['idempotent-replayed'], 'true', 'a retry is a replay');
    t.equal(retry.json().data.id, entryId, 'of the same entry');
    t.equal((await ledger(app, fan)).length, 1, 'still one entry');
    await assertNoViolations(t, app);
  });

  t.test('purchase start', async (t) => {
    const { pack } = await packInStatus(app, 'active', {
      pack: { price: 0, cardsPerPack: 1 },
      pool: [{ quantity: 10 }],
    });
    t.equal(pack.available, 10);
    const key = randomUUID();
    const raced = await Promise.all(
      Array.from({ length: 20 }, () => startPurchase(app, fan, pack.id, { 'idempotency-key': key })),
    );
    const purchaseId = checkRace(t, raced, 'starts');
    t.equal((await salesOf(app, pack.id)).available, 9, 'available dropped by exactly 1');
    t.same(await purchaseStatuses(app, pack.id), { pending: 1 }, 'one purchase exists');

    const retry = await startPurchase(app, fan, pack.id, { 'idempotency-key': key });
    t.equal(retry.statusCode, 201);
    t.equal(retry.headers['idempotent-replayed'], 'true', 'a retry is a replay');
    t.equal(retry.json().data.id, purchaseId, 'of the same purchase');
    t.equal((await salesOf(app, pack.id)).available, 9, 'still 9 available');
    await assertNoViolations(t, app);
  });
});

/**
 * Case 6: one purchase completed through two instances at once. The second instance's batch waits
 * for the purchase's row, which the first holds while it waits for the fan's wallet; once the
 * first commits, the second finds the purchase completed and must answer the same owned pack
 * (read anew: its waiting statement saw the purchase's new status, not the owned pack beside it).
 */
async function completeRaceAcrossInstances(t: Test, apps: App[], prefix: string): Promise<void> {
  const [first, second] = apps as [App, App];
  const { pack } = await packInStatus(first, 'active', {
    pack: { name: `${prefix} pack`, price: 10, cardsPerPack: 1 },
    pool: [{ quantity: 5 }],
  });
  const [fan] = (await fans(first, prefix, 1, 10)) as [Fan];
  const started = await startPurchase(first, fan, pack.id);
  t.equal(started.statusCode, 201);
  const purchaseId = started.json().data.id as string;
  const lockWaiters = async () =>
    (
      await sqlRows<{ n: number }>(
        first,
        sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      )
    )[0]?.n ?? 0;

  const wallet = await holdLock(first, sql`select 1 from wallets where user_id = ${fan.id} for update`);
  let answers: LightMyRequestResponse[] = [];
  try {
    const viaFirst = Promise.resolve(completePurchase(first, fan, pack.id, { purchaseId }));
    for (const deadline = Date.now() + 10_000; (await lockWaiters()) < 1; await sleep(10))
      if (Date.now() > deadline) throw new Error('the first complete never waited');
    const viaSecond = Promise.resolve(completePurchase(second, fan, pack.id, { purchaseId }));
    for (const deadline = Date.now() + 10_000; (await lockWaiters()) < 2; await sleep(10))
      if (Date.now() > deadline) throw new Error('the second complete never waited');
    await wallet.release();
    answers = await Promise.all([viaFirst, viaSecond]);
  } finally {
    await wallet.release();
  }
  t.same(tally(answers), { 200: 2 }, 'both answer 200');
  t.equal(new Set(answers.map((res) => res.json().data.userPack.id)).size, 1, 'the same owned pack');
  t.equal(await balance(first, fan), 0, 'paid once');
  await assertNoViolations(t, first);
}

t.test(
  'two instances sharing one database',
  {
    skip: process.env.TEST_DATABASE_URL
      ? false
      : 'two instances on one database run with TEST_DATABASE_URL (npm run test:pg)',
  },
  async (t) => {
    const database = await createTestDatabase();
    // Teardowns run last-registered first: the database is dropped after both apps closed.
    t.teardown(() => database.drop());
    const env = { DATABASE_URL: database.url, PURCHASE_RATE_LIMIT: '1000', CRON_INTERNAL: 'false' };
    const apps = [await buildTestApp(t, env), await buildTestApp(t, env)];

    t.test('200 buyers alternating between instances: exactly 50 sold', (t) => soldOutRace(t, apps, 'shared-buyer'));
    t.test('50 completes split across instances: exactly 10 paid', (t) => balanceRace(t, apps, 'shared-spender'));
    t.test('20 opens split across instances: opened once', (t) => openRace(t, apps, 'shared-opener'));
    t.test('one purchase completed through both instances at once: the same answer, paid once', (t) =>
      completeRaceAcrossInstances(t, apps, 'shared-completer'),
    );
  },
);
