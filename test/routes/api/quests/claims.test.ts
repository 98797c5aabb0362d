import { sql } from 'drizzle-orm';
import t from 'tap';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, packInStatus } from '../../../support/catalog.js';
import {
  assertNoViolations,
  balance,
  buyPack,
  errorCode,
  expectStatus,
  fund,
  openPack,
  signIn,
  sqlRows,
} from '../../../support/economy.js';
import {
  activeQuest,
  claim,
  createQuest,
  createReward,
  drainQuests,
  progressRows,
  publishQuest,
} from '../../../support/quests.js';

/**
 * A quest's progress comes from the event log only, and its reward is granted once per period
 * and fan, however many claims race for it.
 */

t.test('opening packs completes a count quest; the claim grants the reward once', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', { pack: { price: 1, cardsPerPack: 1 }, pool: [{ quantity: 50 }] });
  const fan = await signIn(app, 'quest-fan');
  const other = await signIn(app, 'quest-other');
  const quest = await activeQuest(app, { criteria: { kind: 'count', event: 'pack.opened', count: 3 } }, { coins: 25 });
  await fund(app, fan, 10);

  const early = await claim(app, fan.token, quest.id);
  expectStatus(early, 409, 'claim before completing');
  t.equal(errorCode(early), 'quest_not_completed');

  for (let n = 0; n < 3; n++) {
    const { userPackId } = await buyPack(app, fan, pack.id);
    expectStatus(await openPack(app, fan, pack.id, { userPackId }), 200, 'open');
    if (n === 1) {
      await drainQuests(app);
      const [row] = await progressRows(app, quest.id, fan.id);
      t.match(row, { period: 'once', progress: 2, target: 3, completed_at: null }, 'two of three');
    }
  }
  await drainQuests(app);
  const seen = await app.inject({ method: 'GET', url: `/api/quests/${quest.id}`, headers: bearer(fan.token) });
  expectStatus(seen, 200, 'read quest');
  t.match(seen.json().data.progress, {
    period: 'once',
    progress: 3,
    target: 3,
    completed: true,
    claimed: false,
    claimable: true,
  });
  const anonymous = await app.inject({ method: 'GET', url: `/api/quests/${quest.id}` });
  t.equal(anonymous.json().data.progress, null, 'no progress without a token');

  const before = await balance(app, fan);
  const first = await claim(app, fan.token, quest.id);
  expectStatus(first, 201, 'claim');
  t.match(first.json().data, { questId: quest.id, period: 'once', created: true });
  t.equal(await balance(app, fan), before + 25, 'the reward’s coins are credited');
  const again = await claim(app, fan.token, quest.id);
  expectStatus(again, 200, 'claim again');
  t.equal(again.json().data.grantId, first.json().data.grantId, 'the same grant');
  t.equal(await balance(app, fan), before + 25, 'once');

  // Another fan's events never count for this one, nor the other way round.
  expectStatus(await claim(app, other.token, quest.id), 409, 'another fan did nothing');
  const [completedEvents] = await sqlRows<{ n: number }>(
    app,
    sql`select count(*)::int as n from events where type = 'quest.completed' and user_id = ${fan.id}`,
  );
  t.equal(completedEvents?.n, 1, 'quest.completed appended once');
  await assertNoViolations(t, app);
});

t.test('20 concurrent claims of one completed quest grant once', async (t) => {
  const app = await buildTestApp(t);
  const fan = await signIn(app, 'racing-fan');
  const quest = await activeQuest(
    app,
    { criteria: { kind: 'count', event: 'purchase.completed', count: 1 } },
    { coins: 7 },
  );
  const { pack } = await packInStatus(app, 'active', { pack: { price: 0, cardsPerPack: 1 }, pool: [{ quantity: 5 }] });
  await buyPack(app, fan, pack.id);
  await drainQuests(app);
  const claims = await Promise.all(Array.from({ length: 20 }, () => claim(app, fan.token, quest.id)));
  const statuses = claims.map((res) => res.statusCode).sort();
  t.equal(statuses.filter((status) => status === 201).length, 1, 'one claim made the grant');
  t.equal(statuses.filter((status) => status === 200).length, 19, 'the others answered it');
  t.equal(new Set(claims.map((res) => res.json().data.grantId)).size, 1, 'one grant id');
  t.equal(await balance(app, fan), 7);
  const [grants] = await sqlRows<{ n: number }>(
    app,
    sql`select count(*)::int as n from grants where user_id = ${fan.id}`,
  );
  t.equal(grants?.n, 1);
  const [entries] = await sqlRows<{ n: number }>(
    app,
    sql`select count(*)::int as n from wallet_ledger where user_id = ${fan.id} and kind = 'reward'`,
  );
  t.equal(entries?.n, 1);
  const [quests] = await sqlRows<{ completions: number }>(
    app,
    sql`select completions from quests where id = ${quest.id}`,
  );
  t.equal(quests?.completions, 1);
  await assertNoViolations(t, app);
});

t.test('a claim names a period of the quest, and an ended quest gives nothing more', async (t) => {
  const app = await buildTestApp(t);
  const fan = await signIn(app, 'period-fan');
  const quest = await activeQuest(app, {
    criteria: { kind: 'count', event: 'purchase.completed', count: 1 },
    period: 'daily',
    timeZone: 'Europe/Paris',
  });
  for (const period of ['yesterday', '2026-02-30', '2026-W10', 'x'.repeat(17)]) {
    const res = await claim(app, fan.token, quest.id, { period });
    t.equal(res.statusCode, 400, `period ${period.slice(0, 20)}`);
  }
  const { pack } = await packInStatus(app, 'active', { pack: { price: 0, cardsPerPack: 1 }, pool: [{ quantity: 5 }] });
  await buyPack(app, fan, pack.id);
  await drainQuests(app);
  const ended = await app.inject({
    method: 'POST',
    url: `/api/admin/quests/${quest.id}`,
    headers: bearer(ADMIN),
    payload: { action: 'end' },
  });
  expectStatus(ended, 200, 'end');
  const late = await claim(app, fan.token, quest.id);
  expectStatus(late, 409, 'claim after the end');
  t.equal(errorCode(late), 'quest_not_active');
  expectStatus(await claim(app, fan.token, 'no-such-quest'), 404, 'unknown quest');
});

t.test('what a fan did before the quest was published does not count, even with a start in the past', async (t) => {
  const app = await buildTestApp(t);
  const fan = await signIn(app, 'early-fan');
  const { pack } = await packInStatus(app, 'active', { pack: { price: 0, cardsPerPack: 1 }, pool: [{ quantity: 5 }] });
  const { id: rewardId } = await createReward(app);
  const draft = await createQuest(app, {
    rewardId,
    startsAt: '2020-01-01T00:00:00.000Z',
    criteria: { kind: 'count', event: 'purchase.completed', count: 1 },
  });
  await buyPack(app, fan, pack.id);
  const published = await publishQuest(app, draft.id);
  t.ok(Date.parse(published.startsAt as string) > Date.parse('2026-01-01'), 'the start moved to the publication');
  await drainQuests(app);
  t.same(await progressRows(app, draft.id, fan.id), [], 'the purchase before publication is not counted');
  await buyPack(app, fan, pack.id);
  await drainQuests(app);
  t.match(await progressRows(app, draft.id, fan.id), [{ progress: 1 }], 'the one after is');
});
