import { sql } from 'drizzle-orm';
import t from 'tap';
import { buildTestApp } from '../../../support/app.js';
import { getAdminPack, packInStatus } from '../../../support/catalog.js';
import { assertNoViolations, errorCode, signIn, sqlRows, startPurchase } from '../../../support/economy.js';
import { createReward } from '../../../support/rewards.js';

/**
 * Concurrent callers of one promise never grant past its count, and a pack whose stock is
 * promised is sold out to buyers while the promise holds it.
 */

t.test('concurrent grants of one promise: exactly its count, the rest reward_exhausted', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', {
    pack: { cardsPerPack: 1, supply: 8 },
    pool: [{ quantity: 20 }],
  });
  const reward = await createReward(app, { coins: 3, packs: [{ packId: pack.id, count: 1 }] });
  await app.db.transaction((tx) => app.rewards.promise(tx, { key: 'round:hot', rewardId: reward.id, count: 5 }));
  const fans = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(app, `hot-fan-${i}`)));
  const outcomes = await Promise.all(
    fans.map((fan) =>
      app.db
        .transaction((tx) =>
          app.rewards.grant(tx, {
            sourceKey: `round:hot:${fan.id}`,
            userId: fan.id,
            rewardId: reward.id,
            reason: 'prize',
            promiseKey: 'round:hot',
          }),
        )
        .then(() => 'granted')
        .catch((error: { code?: string }) => error.code),
    ),
  );
  t.equal(outcomes.filter((outcome) => outcome === 'granted').length, 5, 'five granted');
  t.equal(outcomes.filter((outcome) => outcome === 'reward_exhausted').length, 7, 'the others refused');
  const [counts] = await sqlRows<{ promised: number; granted: number }>(
    app,
    sql`select promised, granted from packs where id = ${pack.id}`,
  );
  t.same(counts, { promised: 0, granted: 5 });
  t.equal((await getAdminPack(app, pack.id)).available, 3);
  await assertNoViolations(t, app);
});

t.test('a pack whose stock is promised is sold out to buyers; a release puts it back on sale', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 0, cardsPerPack: 1, supply: 3 },
    pool: [{ quantity: 10 }],
  });
  const reward = await createReward(app, { packs: [{ packId: pack.id, count: 1 }] });
  await app.db.transaction((tx) => app.rewards.promise(tx, { key: 'league:all', rewardId: reward.id, count: 3 }));
  const fan = await signIn(app, 'buyer-of-promised');
  t.equal(errorCode(await startPurchase(app, fan, pack.id)), 'sold_out');
  await app.db.transaction((tx) => app.rewards.release(tx, 'league:all'));
  t.equal((await startPurchase(app, fan, pack.id)).statusCode, 201, 'released: on sale again');
  t.equal(
    await app.db
      .transaction((tx) => app.rewards.promise(tx, { key: 'league:more', rewardId: reward.id, count: 3 }))
      .catch((error: { code?: string }) => error.code),
    'reward_stock_insufficient',
    'a live reservation holds its pack against promises too',
  );
  await assertNoViolations(t, app);
});
