import { sql } from 'drizzle-orm';
import t from 'tap';
import { seededUniform, serverSeedHash } from '../../../../plugins/app/packs/draw.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { createCollectible, insertTeam } from '../../../support/catalog.js';
import { assertNoViolations, signIn, sqlRows } from '../../../support/economy.js';
import { createReward } from '../../../support/rewards.js';

/**
 * Collectibles a reward gives: serials allocated as a block of the collectible's edition (to a
 * promise, or to a grant made without one), one drawn per copy by a seeded shuffle whose proof the
 * grant keeps; the copies are pulls the locker room lists.
 */

t.test('collectibles of a promised reward get serials of its block, verifiably', async (t) => {
  const app = await buildTestApp(t);
  const teamId = await insertTeam(app, 'Serials');
  const card = await createCollectible(app, { teamId, name: 'Captain', points: 7 });
  const other = await createCollectible(app, { teamId, name: 'Keeper' });
  const reward = await createReward(app, {
    teamId,
    collectibles: [
      { collectibleId: card.id, count: 2 },
      { collectibleId: other.id, count: 1 },
    ],
  });
  await app.db.transaction((tx) => app.rewards.promise(tx, { key: 'league:l1', rewardId: reward.id, count: 3 }));
  const [edition] = await sqlRows<{ edition_size: number; minted: number }>(
    app,
    sql`select edition_size, minted from collectibles where id = ${card.id}`,
  );
  t.same(edition, { edition_size: 6, minted: 0 }, 'the promise allocated 3 × 2 serials');

  const fans = await Promise.all(['s-fan-1', 's-fan-2', 's-fan-3'].map((id) => signIn(app, id)));
  const serials: number[] = [];
  for (const fan of fans) {
    const { grant, created } = await app.db.transaction((tx) =>
      app.rewards.grant(tx, {
        sourceKey: `league:l1:${fan.id}`,
        userId: fan.id,
        rewardId: reward.id,
        reason: 'league prize',
        promiseKey: 'league:l1',
      }),
    );
    t.ok(created);
    const proof = (grant.proof ?? []) as {
      collectibleId: string;
      serialNumber: number;
      message: string;
      v: number;
      unminted: number;
      position: number;
      serverSeed: string;
      serverSeedHash: string;
    }[];
    t.equal(proof.length, 3, 'one serial per copy');
    for (const drawn of proof) {
      t.equal(serverSeedHash(drawn.serverSeed), drawn.serverSeedHash, 'the seed matches its commitment');
      t.equal(seededUniform(drawn.serverSeed, drawn.message), drawn.v, 'v recomputes');
      t.equal(drawn.position, Math.floor(drawn.v * drawn.unminted), 'the position recomputes');
      if (drawn.collectibleId === card.id) serials.push(drawn.serialNumber);
    }
  }
  t.same(
    [...serials].sort((a, b) => a - b),
    [1, 2, 3, 4, 5, 6],
    'the block given out, each serial once',
  );

  const pulls = await app.inject({
    method: 'GET',
    url: '/api/locker-room/collectibles',
    headers: bearer((fans[0] as { token: string }).token),
  });
  t.equal(pulls.statusCode, 200, pulls.body);
  t.equal(pulls.json().data.length, 3, 'the locker room lists the copies');
  t.has(pulls.json().data[0], { packId: null, userPackId: null });
  const totals = await app.inject({
    method: 'GET',
    url: '/api/locker-room',
    headers: bearer((fans[0] as { token: string }).token),
  });
  t.has(totals.json().data, { pulls: 3, points: 14 }, "the copies add their collectibles' points");
  await assertNoViolations(t, app);
});

t.test('an admin grant of collectibles allocates a block of its own', async (t) => {
  const app = await buildTestApp(t);
  const card = await createCollectible(app, { name: 'Platform card' });
  const reward = await createReward(app, { collectibles: [{ collectibleId: card.id, count: 3 }] });
  const fan = await signIn(app, 's-fan-admin');
  const res = await app.inject({
    method: 'POST',
    url: `/api/admin/rewards/${reward.id}/grants`,
    headers: bearer((await import('../../../support/catalog.js')).ADMIN),
    payload: { userIds: [fan.id], key: 'launch', reason: 'launch gift' },
  });
  t.equal(res.statusCode, 200, res.body);
  const serials = res.json().data[0].grant.serials.map((drawn: { serialNumber: number }) => drawn.serialNumber);
  t.same([...serials].sort(), [1, 2, 3]);
  await assertNoViolations(t, app);
});
