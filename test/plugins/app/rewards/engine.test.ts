import { sql } from 'drizzle-orm';
import t from 'tap';
import { verifyDrawProof } from '../../../../plugins/app/packs/draw.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { getAdminPack, packInStatus } from '../../../support/catalog.js';
import {
  assertNoViolations,
  balance,
  buyPack,
  errorCode,
  fund,
  openPack,
  signIn,
  sqlRows,
} from '../../../support/economy.js';
import { createReward, revokeRequest } from '../../../support/rewards.js';

/**
 * The grant engine as quests and leagues call it, in their own transactions: a source key is
 * granted once whatever the concurrency, promises hold inventory and run out, releases give it
 * back, revocation takes back what it can, and a granted pack opens verifiably.
 */

const errorOf = (promise: Promise<unknown>) => promise.then(() => undefined).catch((error: unknown) => error);

t.test('a source key is granted once: 20 concurrent grants make one grant and one ledger entry', async (t) => {
  const app = await buildTestApp(t);
  const fan = await signIn(app, 'reward-fan-concurrent');
  const reward = await createReward(app, { coins: 50 });
  const sourceKey = `quest:q1:2026-W48:${fan.id}`;
  const outcomes = await Promise.all(
    Array.from({ length: 20 }, () =>
      app.db.transaction((tx) =>
        app.rewards.grant(tx, { sourceKey, userId: fan.id, rewardId: reward.id, reason: 'quest completed' }),
      ),
    ),
  );
  t.equal(outcomes.filter((outcome) => outcome.created).length, 1, 'one call created it');
  t.equal(new Set(outcomes.map((outcome) => outcome.grant.id)).size, 1, 'every call answers the one grant');
  const entries = await sqlRows<{ count: number }>(
    app,
    sql`select count(*)::int as count from wallet_ledger where user_id = ${fan.id} and kind = 'reward'`,
  );
  t.equal(entries[0]?.count, 1, 'one ledger entry');
  const events = await sqlRows<{ subject: string; data: { sourceKey: string; coins: number } }>(
    app,
    sql`select subject, data from events where type = 'reward.granted'`,
  );
  t.equal(events.length, 1, 'one reward.granted event');
  t.has(events[0], { subject: outcomes[0]?.grant.id, data: { sourceKey, coins: 50 } });
  t.equal(await balance(app, fan), 50);
  const tooLong = await errorOf(
    app.db.transaction((tx) =>
      app.rewards.grant(tx, { sourceKey: 'k'.repeat(301), userId: fan.id, rewardId: reward.id, reason: 'x' }),
    ),
  );
  t.type(tooLong, RangeError, 'a source key past 300 characters is a bug of the caller');
  t.has(
    await errorOf(
      app.db.transaction((tx) =>
        app.rewards.grant(tx, { sourceKey, userId: 'someone-else', rewardId: reward.id, reason: 'x' }),
      ),
    ),
    { code: 'grant_source_conflict' },
    'a key granted to another user',
  );
  t.has(
    await errorOf(
      app.db.transaction((tx) =>
        app.rewards.grant(tx, { sourceKey: 'quest:x:1:nobody', userId: 'nobody', rewardId: reward.id, reason: 'x' }),
      ),
    ),
    { code: 'user_not_found' },
  );
  t.has(
    await errorOf(
      app.db.transaction((tx) =>
        app.rewards.grant(tx, { sourceKey: 'quest:x:1:y', userId: fan.id, rewardId: 'no-reward', reason: 'x' }),
      ),
    ),
    { code: 'reward_not_found' },
  );
  await assertNoViolations(t, app);
});

t.test('promises hold inventory, run out, and give back the rest on release', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 10, cardsPerPack: 2, supply: 10 },
    pool: [{ quantity: 30 }],
  });
  const reward = await createReward(app, { coins: 5, packs: [{ packId: pack.id, count: 2 }] });
  const promise = (key: string, count: number) =>
    app.db.transaction((tx) => app.rewards.promise(tx, { key, rewardId: reward.id, count }));

  t.has(
    await errorOf(promise('too-many', 6)),
    { statusCode: 409, code: 'reward_stock_insufficient' },
    'supply 10 < 12',
  );
  t.equal((await getAdminPack(app, pack.id)).available, 10, 'a refused promise holds nothing');

  const held = await promise('round:r1', 3);
  t.has(held, { key: 'round:r1', count: 3, granted: 0 });
  t.same(await promise('round:r1', 3), held, 'promising a key again answers it');
  t.has(await errorOf(promise('round:r1', 4)), { code: 'reward_promise_conflict' });
  t.equal((await getAdminPack(app, pack.id)).available, 4, 'six packs promised');

  const fans = await Promise.all(['r-fan-1', 'r-fan-2', 'r-fan-3'].map((id) => signIn(app, id)));
  const grant = (userId: string) =>
    app.db.transaction((tx) =>
      app.rewards.grant(tx, {
        sourceKey: `round:r1:${userId}`,
        userId,
        rewardId: reward.id,
        reason: 'round winner',
        promiseKey: 'round:r1',
      }),
    );
  await grant((fans[0] as { id: string }).id);
  await grant((fans[1] as { id: string }).id);
  t.equal((await getAdminPack(app, pack.id)).available, 4, 'granting from a promise leaves availability as it was');
  const again = await grant((fans[0] as { id: string }).id);
  t.equal(again.created, false, 'a repeat answers the grant');

  const fourth = await signIn(app, 'r-fan-4');
  await grant((fans[2] as { id: string }).id);
  t.has(await errorOf(grant(fourth.id)), { statusCode: 409, code: 'reward_exhausted' }, 'past the promise count');

  const second = await promise('round:r2', 2);
  t.equal(second.count, 2);
  t.equal((await getAdminPack(app, pack.id)).available, 0, 'four more promised');
  const released = await app.db.transaction((tx) => app.rewards.release(tx, 'round:r2'));
  t.has(released, { released: 2, granted: 0 });
  t.equal((await getAdminPack(app, pack.id)).available, 4, 'a release gives the rest back');
  t.same(
    await app.db.transaction((tx) => app.rewards.release(tx, 'round:r2')),
    released,
    'releasing again changes nothing',
  );
  t.has(await errorOf(app.db.transaction((tx) => app.rewards.release(tx, 'nope'))), {
    code: 'reward_promise_not_found',
  });
  t.has(
    await errorOf(
      app.db.transaction((tx) =>
        app.rewards.grant(tx, {
          sourceKey: `round:r2:${fourth.id}`,
          userId: fourth.id,
          rewardId: reward.id,
          reason: 'late',
          promiseKey: 'round:r2',
        }),
      ),
    ),
    { code: 'reward_exhausted' },
    'a released promise gives no grant',
  );
  const sales = await getAdminPack(app, pack.id);
  t.equal(sales.available, 4, 'sold 0 + granted 6 of 10');
  await assertNoViolations(t, app);
});

t.test('a granted pack opens with a verifiable result, and revocation takes back what it can', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 70, cardsPerPack: 2, supply: 20 },
    pool: [{ quantity: 20 }, { quantity: 20 }],
  });
  const fan = await signIn(app, 'reward-fan-open');
  const reward = await createReward(app, { coins: 100, packs: [{ packId: pack.id, count: 2 }] });
  const { grant } = await app.db.transaction((tx) =>
    app.rewards.grant(tx, { sourceKey: `admin:gift:${fan.id}`, userId: fan.id, rewardId: reward.id, reason: 'gift' }),
  );
  t.equal((await getAdminPack(app, pack.id)).available, 18, 'granted packs count against supply');

  const opened = await openPack(app, fan, pack.id, { clientSeed: 'lucky' });
  t.equal(opened.statusCode, 200, opened.body);
  const result = opened.json().data;
  t.same(verifyDrawProof(result.fairness), [], 'the proof checks out');
  const [seed] = await sqlRows<{ server_seed_hash: string }>(
    app,
    sql`select server_seed_hash from user_packs where id = ${result.userPackId}`,
  );
  t.equal(result.fairness.serverSeedHash, seed?.server_seed_hash, 'committed to by the owned pack');

  // Spend 70 of the 100 coins, then revoke: 30 taken back, 70 recorded as uncollected.
  await buyPack(app, fan, pack.id);
  t.equal(await balance(app, fan), 30);
  const revoked = await revokeRequest(app, grant.id, { reason: 'granted by mistake' });
  t.equal(revoked.statusCode, 200, revoked.body);
  t.has(revoked.json().data, {
    status: 'revoked',
    coinsTakenBack: 30,
    coinsUncollected: 70,
    packsTakenBack: 1,
    packsKept: 1,
    revokeReason: 'granted by mistake',
  });
  t.equal(await balance(app, fan), 0, 'never below zero');
  t.equal((await getAdminPack(app, pack.id)).available, 18, 'the unopened pack returned to the supply');
  const [revokedPack] = await sqlRows<{ id: string }>(
    app,
    sql`select id from user_packs where grant_id = ${grant.id} and revoked_at is not null`,
  );
  t.equal(
    errorCode(await openPack(app, fan, pack.id, { userPackId: revokedPack?.id })),
    'user_pack_not_found',
    'a pack taken back cannot be opened',
  );
  const locker = await app.inject({ method: 'GET', url: '/api/locker-room', headers: bearer(fan.token) });
  t.equal(locker.json().data.unopenedPacks, 1, 'the locker room counts the bought pack only');
  const next = await openPack(app, fan, pack.id);
  t.equal(next.statusCode, 200, 'the bought pack still opens');
  t.not(next.json().data.userPackId, revokedPack?.id);
  t.equal(errorCode(await openPack(app, fan, pack.id)), 'no_unopened_pack', 'and the taken-back one is not offered');
  const revokedEvents = await sqlRows<{ data: unknown }>(
    app,
    sql`select data from events where type = 'reward.revoked' and subject = ${grant.id}`,
  );
  t.same(revokedEvents, [{ data: { grantId: grant.id, coinsTakenBack: 30, coinsUncollected: 70 } }]);
  const twice = await revokeRequest(app, grant.id, { reason: 'again' });
  t.same(twice.json().data, revoked.json().data, 'revoking twice changes nothing');
  const [counted] = await sqlRows<{ count: number }>(
    app,
    sql`select count(*)::int as count from events where type = 'reward.revoked'`,
  );
  t.equal(counted?.count, 1, 'and appends no second event');
  await fund(app, fan, 5);
  await assertNoViolations(t, app);
});
