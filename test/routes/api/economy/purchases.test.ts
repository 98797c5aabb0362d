import t from 'tap';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, applyAction, getAdminPack, packInStatus } from '../../../support/catalog.js';
import {
  adjust,
  balance,
  buyPack,
  cancelPurchase,
  completePurchase,
  economyViolations,
  expectStatus,
  fund,
  openPack,
  signIn,
  startPurchase,
} from '../../../support/economy.js';
import { verifyDrawProof } from '../../../../plugins/app/packs/draw.js';
import { createHash } from 'node:crypto';

t.test('buying and opening a pack, as a fan does it', async (t) => {
  const app = await buildTestApp(t);
  const { pack, collectibles } = await packInStatus(app, 'active', {
    pack: { price: 100, cardsPerPack: 3 },
    pool: [
      { quantity: 6, collectible: { points: 5, rarity: 'common' } },
      { quantity: 3, weight: 2, collectible: { points: 50, rarity: 'rare' } },
    ],
  });
  const fan = await signIn(app, 'fan-flow');
  await fund(app, fan, 250);

  const started = await startPurchase(app, fan, pack.id);
  expectStatus(started, 201, 'start');
  const purchase = started.json().data;
  t.match(purchase, { packId: pack.id, status: 'pending', price: 100, clientSeed: null, completedAt: null });
  t.match(purchase.serverSeedHash, /^[0-9a-f]{64}$/);
  t.ok(Date.parse(purchase.expiresAt) > Date.now() + 14 * 60_000, 'held for PURCHASE_TTL (15 minutes)');
  t.equal((await getAdminPack(app, pack.id)).available, 2, 'the reservation holds one of the 3 packs the pool fills');
  t.equal(await balance(app, fan), 250, 'starting costs nothing');

  const completed = await completePurchase(app, fan, pack.id, { purchaseId: purchase.id, clientSeed: 'lucky' });
  expectStatus(completed, 200, 'complete');
  const { purchase: paid, userPack } = completed.json().data;
  t.match(paid, { id: purchase.id, status: 'completed', clientSeed: 'lucky', serverSeedHash: purchase.serverSeedHash });
  t.match(userPack, { packId: pack.id, purchaseId: purchase.id, openedAt: null });
  t.equal(await balance(app, fan), 150, 'the price was debited');
  const again = await completePurchase(app, fan, pack.id, { purchaseId: purchase.id });
  t.same(again.json(), completed.json(), 'completing again answers the same, and charges nothing');
  t.equal(await balance(app, fan), 150);

  const ledger = await app.inject({ method: 'GET', url: '/api/wallet/transactions', headers: bearer(fan.token) });
  t.match(ledger.json().data, [
    { kind: 'purchase', amount: -100, balanceAfter: 150, reference: purchase.id },
    { kind: 'adjustment', amount: 250, balanceAfter: 250, reason: 'test funds' },
  ]);

  const lockerBefore = await app.inject({ method: 'GET', url: '/api/locker-room', headers: bearer(fan.token) });
  t.same(lockerBefore.json().data, {
    pulls: 0,
    byRarity: { common: 0, uncommon: 0, rare: 0, epic: 0, legendary: 0 },
    points: 0,
    unopenedPacks: 1,
  });

  // A POST without a body at all (curl -X POST) means {}: the oldest unopened pack.
  const opened = await app.inject({ method: 'POST', url: `/api/packs/${pack.id}/open`, headers: bearer(fan.token) });
  expectStatus(opened, 200, 'open');
  const result = opened.json().data;
  t.equal(result.userPackId, userPack.id, 'without userPackId: the oldest unopened pack');
  t.equal(result.items.length, 3);
  t.equal(result.fairness.clientSeed, 'lucky', 'the client seed given when completing');
  t.equal(result.fairness.serverSeedHash, purchase.serverSeedHash, 'the seed committed to at the start');
  t.equal(
    createHash('sha256').update(Buffer.from(result.fairness.serverSeed, 'hex')).digest('hex'),
    purchase.serverSeedHash,
  );
  t.same(verifyDrawProof(result.fairness), [], 'the proof checks out');
  t.same(
    result.fairness.pool,
    collectibles
      .map((c, i) => ({ collectibleId: c.id, weight: i === 0 ? 1 : 2, remaining: i === 0 ? 6 : 3 }))
      .sort((a, b) => (a.collectibleId < b.collectibleId ? -1 : 1)),
    'the pool before the first draw, in draw order',
  );
  for (const item of result.items) {
    t.ok(
      item.serialNumber >= 1 && item.serialNumber <= item.editionSize,
      `serial ${item.serialNumber} / ${item.editionSize}`,
    );
  }
  const points = result.items.reduce(
    (sum: number, item: { collectible: { points: number } }) => sum + item.collectible.points,
    0,
  );

  const lockerAfter = (await app.inject({ method: 'GET', url: '/api/locker-room', headers: bearer(fan.token) })).json()
    .data;
  t.equal(lockerAfter.pulls, 3);
  t.equal(lockerAfter.points, points, "the collectibles' points were added to the owner's score");
  t.equal(lockerAfter.unopenedPacks, 0);
  t.equal(lockerAfter.byRarity.common + lockerAfter.byRarity.rare, 3);

  const reopened = await openPack(app, fan, pack.id, { userPackId: userPack.id, clientSeed: 'another' });
  t.same(reopened.json(), opened.json(), 'opening an opened pack answers the stored result');
  const stored = await app.inject({
    method: 'GET',
    url: `/api/locker-room/opens/${userPack.id}`,
    headers: bearer(fan.token),
  });
  t.same(stored.json().data, result, 'the locker room keeps the open with its proof');

  const pulls = await app.inject({
    method: 'GET',
    url: '/api/locker-room/collectibles',
    query: { limit: '2' },
    headers: bearer(fan.token),
  });
  t.equal(pulls.json().data.length, 2);
  t.type(pulls.json().nextCursor, 'string');
  const rest = await app.inject({
    method: 'GET',
    url: '/api/locker-room/collectibles',
    query: { cursor: pulls.json().nextCursor },
    headers: bearer(fan.token),
  });
  t.equal(rest.json().data.length, 1);
  t.equal(rest.json().nextCursor, null);
  const rare = await app.inject({
    method: 'GET',
    url: '/api/locker-room/collectibles',
    query: { rarity: 'rare' },
    headers: bearer(fan.token),
  });
  t.equal(rare.json().data.length, lockerAfter.byRarity.rare, 'filtered by rarity');

  const admin = await getAdminPack(app, pack.id);
  t.match(admin, { sold: 1, opened: 1, available: 2 });
  t.equal(
    admin.pool.reduce((sum, entry) => sum + entry.remaining, 0),
    6,
    'three copies left the pool',
  );
  t.same(await economyViolations(app), []);
});

t.test('what a fan cannot do', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 100, cardsPerPack: 1 },
    pool: [{ quantity: 5 }],
  });
  const { pack: draft } = await packInStatus(app, 'draft', { pack: { cardsPerPack: 1 } });
  const { pack: archived } = await packInStatus(app, 'archived', { pack: { cardsPerPack: 1 } });
  const fan = await signIn(app, 'fan-no');
  const other = await signIn(app, 'fan-other');

  t.equal(
    (await app.inject({ method: 'POST', url: `/api/packs/${pack.id}/purchase` })).statusCode,
    401,
    'signed in only',
  );
  t.equal((await startPurchase(app, fan, 'no-such-pack')).json().error.code, 'pack_not_found');
  t.equal((await startPurchase(app, fan, draft.id)).json().error.code, 'pack_not_found', 'a draft is not public');
  const notOnSale = await startPurchase(app, fan, archived.id);
  t.equal(notOnSale.statusCode, 409);
  t.equal(notOnSale.json().error.code, 'pack_not_on_sale');

  const started = (await startPurchase(app, fan, pack.id)).json().data;
  const broke = await completePurchase(app, fan, pack.id, { purchaseId: started.id });
  t.equal(broke.statusCode, 409);
  t.equal(broke.json().error.code, 'insufficient_funds');
  t.equal((await getAdminPack(app, pack.id)).available, 4, 'the purchase stays pending and keeps its pack');

  t.equal(
    (await completePurchase(app, other, pack.id, { purchaseId: started.id })).json().error.code,
    'purchase_not_found',
    "another fan's purchase",
  );
  t.equal(
    (await completePurchase(app, fan, archived.id, { purchaseId: started.id })).json().error.code,
    'purchase_not_found',
    'another pack',
  );
  t.equal(
    (await completePurchase(app, fan, pack.id, { purchaseId: started.id, extra: 1 })).statusCode,
    400,
    'unknown fields',
  );
  t.equal(
    (await completePurchase(app, fan, pack.id, { purchaseId: started.id, clientSeed: '' })).statusCode,
    400,
    'an empty client seed',
  );
  t.equal(
    (await completePurchase(app, fan, pack.id, { purchaseId: started.id, clientSeed: 'é' })).statusCode,
    400,
    'printable ASCII only',
  );
  t.equal((await completePurchase(app, fan, pack.id, {})).statusCode, 400, 'purchaseId is required');

  const cancelled = await cancelPurchase(app, fan, pack.id, started.id);
  expectStatus(cancelled, 200, 'cancel');
  t.equal(cancelled.json().data.status, 'cancelled');
  t.same(
    (await cancelPurchase(app, fan, pack.id, started.id)).json(),
    cancelled.json(),
    'cancelling again answers the same',
  );
  t.equal((await getAdminPack(app, pack.id)).available, 5, 'the pack is released');
  t.equal(
    (await completePurchase(app, fan, pack.id, { purchaseId: started.id })).json().error.code,
    'purchase_cancelled',
  );

  await fund(app, fan, 100);
  const { purchaseId } = await buyPack(app, fan, pack.id);
  t.equal((await cancelPurchase(app, fan, pack.id, purchaseId)).json().error.code, 'purchase_completed');

  t.equal((await openPack(app, other, pack.id)).json().error.code, 'no_unopened_pack');
  const owned = (await app.inject({ method: 'GET', url: '/api/locker-room', headers: bearer(fan.token) })).json().data;
  t.equal(owned.unopenedPacks, 1);
  const foreign = await openPack(app, other, pack.id, { userPackId: 'not-mine' });
  t.equal(foreign.statusCode, 404);
  t.equal(foreign.json().error.code, 'user_pack_not_found');
  const notOpened = await app.inject({
    method: 'GET',
    url: '/api/locker-room/opens/whatever',
    headers: bearer(fan.token),
  });
  t.equal(notOpened.json().error.code, 'open_not_found');

  // Archiving stops sales; owned packs stay openable.
  await applyAction(app, pack.id, { action: 'archive' });
  t.equal((await startPurchase(app, fan, pack.id)).json().error.code, 'pack_not_on_sale');
  const opened = await openPack(app, fan, pack.id);
  expectStatus(opened, 200, 'open an owned pack of an archived pack');
  t.same(await economyViolations(app), []);
});

t.test('packs already sold stay whole when a pack is restored and edited', async (t) => {
  const app = await buildTestApp(t);
  const { pack, collectibles } = await packInStatus(app, 'active', {
    pack: { price: 0, cardsPerPack: 2, supply: 5 },
    pool: [{ quantity: 4 }, { quantity: 2 }],
  });
  const fan = await signIn(app, 'fan-whole');
  await buyPack(app, fan, pack.id);
  await buyPack(app, fan, pack.id);
  await applyAction(app, pack.id, { action: 'archive' });
  await applyAction(app, pack.id, { action: 'restore' });

  const patch = (body: Record<string, unknown>) =>
    app.inject({ method: 'PATCH', url: `/api/admin/packs/${pack.id}`, headers: bearer(ADMIN), payload: body });
  const action = (body: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `/api/admin/packs/${pack.id}`, headers: bearer(ADMIN), payload: body });
  t.equal((await patch({ cardsPerPack: 3 })).json().error.code, 'pool_committed', 'two unopened packs of 2 cards');
  t.equal((await patch({ supply: 1 })).json().error.code, 'supply_below_sales');
  t.equal(
    (await action({ action: 'addCollectible', collectibleId: collectibles[0]?.id, quantity: 1 })).json().error.code,
    'pool_committed',
    '1 + 2 copies < 4 needed',
  );
  t.equal(
    (await action({ action: 'removeCollectible', collectibleId: collectibles[0]?.id })).json().error.code,
    'pool_committed',
  );
  expectStatus(
    await action({ action: 'addCollectible', collectibleId: collectibles[0]?.id, quantity: 2 }),
    200,
    '2 + 2 copies: enough',
  );
  expectStatus(await patch({ maxPerUser: 1, supply: 2 }), 200, 'maxPerUser and supply are editable in a draft');

  // Both owned packs open from what the pool kept, with serials from the blocks given at the first publish.
  const first = await openPack(app, fan, pack.id);
  const second = await openPack(app, fan, pack.id);
  expectStatus(first, 200, 'first open');
  expectStatus(second, 200, 'second open');
  const serials = [...first.json().data.items, ...second.json().data.items].map(
    (item: { collectible: { id: string }; serialNumber: number }) => `${item.collectible.id}#${item.serialNumber}`,
  );
  t.equal(new Set(serials).size, 4, 'four distinct serials');
  t.same(await economyViolations(app), []);

  // Published again with more copies: only the added copies get new serials.
  expectStatus(
    await action({ action: 'addCollectible', collectibleId: collectibles[1]?.id, quantity: 5 }),
    200,
    'more copies',
  );
  expectStatus(await action({ action: 'publish' }), 200, 'publish again');
  const collectible = await app.inject({
    method: 'GET',
    url: `/api/admin/collectibles/${collectibles[1]?.id}`,
    headers: bearer(ADMIN),
  });
  t.equal(collectible.statusCode, 200);
  t.same(await economyViolations(app), []);
});

t.test('wallet adjustments by platform admins', async (t) => {
  const app = await buildTestApp(t);
  const fan = await signIn(app, 'fan-wallet');
  t.same((await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) })).json().data, {
    balance: 0,
    currency: 'coins',
  });

  const credit = await adjust(app, fan.id, { amount: 300, reason: '  welcome bonus ' });
  expectStatus(credit, 201, 'credit');
  t.match(credit.json().data, {
    amount: 300,
    balanceAfter: 300,
    kind: 'adjustment',
    reason: 'welcome bonus',
    reference: null,
  });
  const debit = await adjust(app, fan.id, { amount: -301, reason: 'too much' });
  t.equal(debit.statusCode, 409);
  t.equal(debit.json().error.code, 'insufficient_funds');
  expectStatus(await adjust(app, fan.id, { amount: -300, reason: 'all of it' }), 201, 'down to zero');
  t.equal(await balance(app, fan), 0);

  t.equal((await adjust(app, 'nobody', { amount: 1, reason: 'x' })).json().error.code, 'user_not_found');
  for (const body of [
    { amount: 0, reason: 'zero' },
    { amount: 1.5, reason: 'half' },
    { amount: '5', reason: 'string' },
    { amount: 1 },
    { amount: 1, reason: '   ' },
    { amount: 2_000_000_000, reason: 'huge' },
  ]) {
    t.equal((await adjust(app, fan.id, body)).statusCode, 400, `refused: ${JSON.stringify(body)}`);
  }
  const byFan = await app.inject({
    method: 'POST',
    url: `/api/admin/wallets/${fan.id}/adjustments`,
    headers: bearer(fan.token),
    payload: { amount: 5, reason: 'me' },
  });
  t.equal(byFan.statusCode, 403, 'platform admins only');

  // (An empty value or leading spaces are gone before validation: HTTP trims header values.)
  for (const key of ['x'.repeat(256), 'tab\there', 'trailing ']) {
    t.equal(
      (await adjust(app, fan.id, { amount: 1, reason: 'k' }, { 'idempotency-key': key })).statusCode,
      400,
      `a bad Idempotency-Key ${JSON.stringify(key.slice(0, 12))}`,
    );
  }
  const first = await adjust(app, fan.id, { amount: 7, reason: 'once' }, { 'idempotency-key': 'grant-1' });
  const retry = await adjust(app, fan.id, { amount: 7, reason: 'once' }, { 'idempotency-key': 'grant-1' });
  t.equal(retry.headers['idempotent-replayed'], 'true');
  t.same(retry.json(), first.json(), 'a retry answers the first response');
  t.equal(await balance(app, fan), 7, 'and credits once');
  const reordered = await adjust(app, fan.id, { reason: 'once', amount: 7 }, { 'idempotency-key': 'grant-1' });
  t.equal(reordered.headers['idempotent-replayed'], 'true', 'the same fields in another order are the same request');
  const changed = await adjust(app, fan.id, { amount: 8, reason: 'once' }, { 'idempotency-key': 'grant-1' });
  t.equal(changed.statusCode, 422);
  t.equal(changed.json().error.code, 'idempotency_key_reused');
  const refused = await adjust(app, fan.id, { amount: -100, reason: 'no' }, { 'idempotency-key': 'debit-1' });
  const refusedAgain = await adjust(app, fan.id, { amount: -100, reason: 'no' }, { 'idempotency-key': 'debit-1' });
  t.equal(refusedAgain.statusCode, 409, 'a refused change is answered the same on retry');
  t.equal(refusedAgain.headers['idempotent-replayed'], 'true');
  t.same(
    refusedAgain.json(),
    { ...refused.json(), error: { ...refused.json().error, requestId: refusedAgain.headers['x-request-id'] } },
    'the same error, naming the retry',
  );
  const invalid = await adjust(app, fan.id, { amount: 0, reason: 'no' }, { 'idempotency-key': 'bad-1' });
  t.equal(invalid.statusCode, 400);
  expectStatus(
    await adjust(app, fan.id, { amount: 1, reason: 'fixed' }, { 'idempotency-key': 'bad-1' }),
    201,
    'a request refused by validation stored nothing',
  );

  const entries = (
    await app.inject({
      method: 'GET',
      url: '/api/wallet/transactions',
      query: { limit: '200' },
      headers: bearer(fan.token),
    })
  ).json().data;
  t.same(
    entries.map((entry: { amount: number }) => entry.amount),
    [1, 7, -300, 300],
    'newest first, each once',
  );
  t.same(await economyViolations(app), []);
});

t.test('the purchase rate limit counts starts per user', async (t) => {
  const app = await buildTestApp(t, { PURCHASE_RATE_LIMIT: '2' });
  const { pack } = await packInStatus(app, 'active', { pack: { price: 0, cardsPerPack: 1 }, pool: [{ quantity: 10 }] });
  const fan = await signIn(app, 'fan-rate');
  const other = await signIn(app, 'fan-rate-2');
  expectStatus(await startPurchase(app, fan, pack.id), 201, 'first');
  expectStatus(await startPurchase(app, fan, pack.id), 201, 'second');
  const third = await startPurchase(app, fan, pack.id);
  t.equal(third.statusCode, 429);
  t.equal(third.json().error.code, 'rate_limited');
  t.ok(Number(third.headers['retry-after']) > 0, 'with Retry-After');
  expectStatus(await startPurchase(app, other, pack.id), 201, 'another user has a limit of their own');
});
