import { sql } from 'drizzle-orm';
import t, { type Test } from 'tap';
import type { App } from '../../../../app.js';
import { buildTestApp } from '../../../support/app.js';
import { getAdminPack, packInStatus } from '../../../support/catalog.js';
import {
  assertNoViolations,
  buyPack,
  errorCode,
  expectStatus,
  fund,
  signIn,
  sqlRows,
  startPurchase,
} from '../../../support/economy.js';
import { claim, createQuest, createReward, drainQuests, publishQuest, questRequest } from '../../../support/quests.js';

/**
 * A quest that gives packs reserves them when it is published, or is refused: it never promises
 * what the supply cannot give, and it gives back what it did not give when it ends.
 */

// The admin view: the public catalog is cached for up to 5 s, as after any sale.
const availableOf = async (app: App, packId: string) => (await getAdminPack(app, packId)).available as number;

async function setUp(t: Test) {
  const app = await buildTestApp(t);
  // The reward pack: a supply of 5. The quest counts purchases of another, free pack.
  const { pack: rewardPack } = await packInStatus(app, 'active', {
    pack: { price: 5, cardsPerPack: 1, supply: 5 },
    pool: [{ quantity: 20 }],
  });
  const { pack: freePack } = await packInStatus(app, 'active', {
    pack: { price: 0, cardsPerPack: 1 },
    pool: [{ quantity: 50 }],
  });
  const reward = await createReward(app, { coins: 0, packs: [{ packId: rewardPack.id, count: 2 }] });
  return { app, rewardPack, freePack, reward };
}

t.test('a publication the supply cannot cover is refused; a smaller one reserves its packs', async (t) => {
  const { app, rewardPack, freePack, reward } = await setUp(t);
  const noLimit = await createQuest(app, {
    rewardId: reward.id,
    criteria: { kind: 'count', event: 'purchase.completed', count: 1 },
  });
  const unlimited = await questRequest(app, 'POST', `/api/admin/quests/${noLimit.id}`, { action: 'publish' });
  t.equal(unlimited.statusCode, 400, 'packs need a limit');
  t.equal(errorCode(unlimited), 'validation_failed');

  const quest = await createQuest(app, {
    rewardId: reward.id,
    maxCompletions: 3,
    criteria: { kind: 'count', event: 'purchase.completed', count: 1 },
  });
  const tooMany = await questRequest(app, 'POST', `/api/admin/quests/${quest.id}`, { action: 'publish' });
  t.equal(tooMany.statusCode, 409, '3 completions × 2 packs > a supply of 5');
  t.equal(errorCode(tooMany), 'reward_stock_insufficient');
  t.equal(await availableOf(app, rewardPack.id), 5, 'a refused publication reserves nothing');

  expectStatus(
    await questRequest(app, 'PATCH', `/api/admin/quests/${quest.id}`, { maxCompletions: 2 }),
    200,
    'lower the limit',
  );
  await publishQuest(app, quest.id);
  t.equal(await availableOf(app, rewardPack.id), 1, 'four packs held for the quest');
  const buyer = await signIn(app, 'buyer');
  await fund(app, buyer, 10);
  await buyPack(app, buyer, rewardPack.id);
  const second = await startPurchase(app, buyer, rewardPack.id);
  t.equal(errorCode(second), 'sold_out', 'the one pack left was for sale, and no more');

  // Three fans complete; two claims fit the stock, the third is refused rather than over-promised.
  const fans = await Promise.all(['a', 'b', 'c'].map((name) => signIn(app, `stock-fan-${name}`)));
  for (const fan of fans) await buyPack(app, fan, freePack.id);
  await drainQuests(app);
  const outcomes = await Promise.all(fans.map((fan) => claim(app, fan.token, quest.id)));
  t.same(outcomes.map((res) => res.statusCode).sort(), [201, 201, 409]);
  t.same(outcomes.filter((res) => res.statusCode === 409).map(errorCode), ['quest_exhausted']);
  const [owned] = await sqlRows<{ n: number }>(
    app,
    sql`select count(*)::int as n from user_packs where pack_id = ${rewardPack.id} and grant_id is not null`,
  );
  t.equal(owned?.n, 4, 'two packs to each of two fans');
  t.equal(await availableOf(app, rewardPack.id), 0);
  await assertNoViolations(t, app);
});

t.test('ending a quest gives back the packs it reserved and did not give', async (t) => {
  const { app, rewardPack, freePack, reward } = await setUp(t);
  const quest = await createQuest(app, {
    rewardId: reward.id,
    maxCompletions: 2,
    criteria: { kind: 'count', event: 'purchase.completed', count: 1 },
  });
  await publishQuest(app, quest.id);
  t.equal(await availableOf(app, rewardPack.id), 1);
  const fan = await signIn(app, 'one-claim');
  await buyPack(app, fan, freePack.id);
  await drainQuests(app);
  expectStatus(await claim(app, fan.token, quest.id), 201, 'claim');
  expectStatus(await questRequest(app, 'POST', `/api/admin/quests/${quest.id}`, { action: 'end' }), 200, 'end');
  t.equal(await availableOf(app, rewardPack.id), 3, 'the second completion’s two packs are for sale again');
  await assertNoViolations(t, app);
});
