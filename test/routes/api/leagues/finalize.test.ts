import { sql } from 'drizzle-orm';
import t, { type Test } from 'tap';
import type { App } from '../../../../app.js';
import { buildTestApp, tokenFor } from '../../../support/app.js';
import { ADMIN, allAuditEntries, expectStatus, packInStatus } from '../../../support/catalog.js';
import { assertNoViolations, sqlRows } from '../../../support/economy.js';
import {
  adminRoundUrl,
  copiesOf,
  finalizeRequest,
  giveCards,
  inSeconds,
  leagueWorld,
  openRound,
  packBand,
  postScores,
  putLineup,
  roundGrants,
  roundUrl,
  waitUntil,
  wholeBoard,
} from '../../../support/leagues.js';
import { createReward } from '../../../support/rewards.js';
import { call, codeOf } from '../../../support/teams.js';

/**
 * Finalization: standings frozen once, prizes paid once per fan whatever repeats, races or
 * crashes, the stock a band promised given and the rest released; score corrections audited
 * before, refused after.
 */

/** A locked round of `fans` (lineup of one copy each, of the rarity named) with every card scored `points`. */
async function lockedRound(
  t: Test,
  prefix: string,
  picks: Record<string, string>,
  prizes: (app: App, world: Awaited<ReturnType<typeof leagueWorld>>) => Promise<Record<string, unknown>[]>,
) {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, prefix, { lineupSize: 1, eligible: {} });
  const fans = Object.keys(picks);
  await giveCards(app, world, fans);
  const round = await openRound(app, world.leagueId, 1.2, { prizes: await prizes(app, world) });
  for (const fan of fans) {
    const copy = (await copiesOf(app, fan)).find((c) => c.rarity === picks[fan]);
    expectStatus(await putLineup(app, tokenFor(fan), world.leagueId, round.id, [copy?.pullId as string]), 200, fan);
  }
  await waitUntil(round.locksAt);
  const points = { common: 1, uncommon: 2, rare: 3, epic: 4, legendary: 5 } as Record<string, number>;
  const scores = world.cards.map((card) => ({ collectibleId: card.id, score: points[card.rarity] as number }));
  expectStatus(await postScores(app, world.leagueId, round.id, scores), 200, 'scores');
  return { app, world, round };
}

const packsOwned = async (app: App, packId: string) =>
  (
    await sqlRows<{ user_id: string; n: number }>(
      app,
      sql`select user_id, count(*)::int as n from user_packs where pack_id = ${packId} group by user_id order by user_id`,
    )
  ).map((row) => [row.user_id, row.n]);

t.test('two finalizations at once freeze the standings once and pay each winner once', async (t) => {
  let packId = '';
  const { app, world, round } = await lockedRound(
    t,
    'fin',
    { 'fin-a': 'legendary', 'fin-b': 'epic', 'fin-c': 'rare', 'fin-d': 'common' },
    async (app, world) => {
      const { pack } = await packInStatus(app, 'active', {
        pack: { teamId: world.staff.team.id, price: 5, cardsPerPack: 1, supply: 5 },
        pool: [{ quantity: 20 }],
      });
      packId = pack.id;
      const packReward = await createReward(app, { teamId: world.staff.team.id, packs: [{ packId, count: 1 }] });
      const coins = await createReward(app, { teamId: world.staff.team.id, coins: 10 });
      return [
        { fromRank: 1, toRank: 1, rewardId: packReward.id },
        { fromRank: 2, toRank: 3, rewardId: coins.id },
      ];
    },
  );
  const [first, second] = await Promise.all([
    finalizeRequest(app, world.leagueId, round.id),
    finalizeRequest(app, world.leagueId, round.id),
  ]);
  t.equal(first?.statusCode, 200);
  t.equal(second?.statusCode, 200);
  t.equal(first?.json().data.standingsHash, second?.json().data.standingsHash);
  const grants = await roundGrants(app, round.id);
  t.same(
    grants.map((g) => g.user_id),
    ['fin-a', 'fin-b', 'fin-c'],
    'one grant per winner',
  );
  t.same(await packsOwned(app, packId), [['fin-a', 1]], 'the band of rank 1 gave its promised pack');
  const [promise] = await sqlRows<{ granted: number; released: number }>(
    app,
    sql`select granted, released from reward_promises where key = ${`round:${round.id}:band:0`}`,
  );
  t.same(promise, { granted: 1, released: 0 });
  const again = await finalizeRequest(app, world.leagueId, round.id);
  expectStatus(again, 200, 'a third finalize');
  t.ok(again.json().data.prizesPaidAt, 'prizes paid');
  t.equal((await roundGrants(app, round.id)).length, 3, 'nothing paid twice');
  const { entries } = await wholeBoard(app, round.id, 10);
  t.same(
    entries.map((e) => [e.userId, e.prize?.grantId ? 'paid' : e.prize ? 'unpaid' : 'none']),
    [
      ['fin-a', 'paid'],
      ['fin-b', 'paid'],
      ['fin-c', 'paid'],
      ['fin-d', 'none'],
    ],
  );
  const events = await sqlRows<{ data: Record<string, unknown>; team_id: string }>(
    app,
    sql`select data, team_id from events where type = 'round.finalized'`,
  );
  t.same(events, [
    {
      team_id: world.staff.team.id,
      data: {
        leagueId: world.leagueId,
        roundId: round.id,
        season: '2026-27',
        standingsHash: again.json().data.standingsHash,
        entrants: 4,
      },
    },
  ]);
  const audit = (await allAuditEntries(app, { targetId: round.id })).map((entry) => entry.action);
  t.same(
    audit.filter((action) => action === 'round.finalize'),
    ['round.finalize'],
    'finalized once',
  );
  await assertNoViolations(t, app);
});

t.test('a crash between the ranking and the prizes: finalizing again pays each winner once', async (t) => {
  const { app, world, round } = await lockedRound(
    t,
    'crash',
    { 'crash-a': 'legendary', 'crash-b': 'epic', 'crash-c': 'rare' },
    async (app, world) => {
      const coins = await createReward(app, { teamId: world.staff.team.id, coins: 7 });
      return [{ fromRank: 1, toRank: 2, rewardId: coins.id }];
    },
  );
  // Phase 1 alone, as a crash right after its commit leaves it.
  t.equal(await app.leagues.finalizer.rank(round.id, 'root'), true);
  t.equal(await app.leagues.finalizer.rank(round.id, 'root'), false, 'ranked once');
  const halfway = await call(app, 'GET', roundUrl(world.leagueId, round.id), null);
  t.equal(halfway.json().data.status, 'final');
  t.equal(halfway.json().data.prizesPaidAt, null);
  t.same(await roundGrants(app, round.id), [], 'nothing paid yet');
  expectStatus(await finalizeRequest(app, world.leagueId, round.id), 200, 'resume');
  expectStatus(await finalizeRequest(app, world.leagueId, round.id), 200, 'again');
  t.same(
    (await roundGrants(app, round.id)).map((g) => g.user_id),
    ['crash-a', 'crash-b'],
  );
  await assertNoViolations(t, app);
});

t.test('a tie past a band paid from supply that ran out: finalize answers the error and stays resumable', async (t) => {
  let packId = '';
  const { app, world, round } = await lockedRound(
    t,
    'tie',
    { 'tie-a': 'legendary', 'tie-b': 'legendary', 'tie-c': 'common' },
    async (app, world) => {
      const prize = await packBand(app, world, 1);
      packId = prize.packId;
      return [prize.band];
    },
  );
  const refused = await finalizeRequest(app, world.leagueId, round.id);
  t.equal(refused.statusCode, 409, 'the second winner of rank 1 finds no pack left');
  t.equal(codeOf(refused), 'reward_stock_insufficient');
  const state = (await call(app, 'GET', roundUrl(world.leagueId, round.id), null)).json().data;
  t.equal(state.status, 'final', 'the standings are frozen');
  t.equal(state.prizesPaidAt, null, 'the prizes are not all paid');
  t.same(
    (await roundGrants(app, round.id)).map((g) => g.user_id),
    ['tie-a'],
    'the promised pack went to the first by position',
  );
  const retry = await finalizeRequest(app, world.leagueId, round.id);
  t.equal(codeOf(retry), 'reward_stock_insufficient', 'still short');
  t.equal((await roundGrants(app, round.id)).length, 1, 'nobody paid twice');
  t.same(await packsOwned(app, packId), [['tie-a', 1]]);
  await assertNoViolations(t, app);
});

t.test('a round whose band promises more than the supply is refused at creation', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'short');
  const { band } = await packBand(app, world, 2);
  const res = await call(app, 'POST', `/api/admin/leagues/${world.leagueId}/rounds`, ADMIN, {
    payload: {
      name: 'Too generous',
      opensAt: inSeconds(-60),
      locksAt: inSeconds(60),
      endsAt: inSeconds(120),
      prizes: [{ ...band, toRank: 3 }],
    },
  });
  t.equal(res.statusCode, 409);
  t.equal(codeOf(res), 'reward_stock_insufficient');
});

t.test('a score correction before finalization is audited; scores after it are refused', async (t) => {
  const { app, world, round } = await lockedRound(t, 'fix', { 'fix-a': 'rare', 'fix-b': 'epic' }, async () => []);
  const [rare, epic] = ['rare', 'epic'].map((r) => world.cards.find((c) => c.rarity === r)?.id as string);
  const dup = await postScores(app, world.leagueId, round.id, [
    { collectibleId: rare, score: 1 },
    { collectibleId: rare, score: 2 },
  ]);
  t.equal(dup.statusCode, 400, 'a collectible twice');
  const same = await postScores(app, world.leagueId, round.id, [{ collectibleId: rare, score: 3 }]);
  expectStatus(same, 200, 'the same score again');
  t.same(
    (await allAuditEntries(app, { targetId: round.id })).filter((e) => e.action === 'round.scores.correct'),
    [],
    'an unchanged score is no correction',
  );
  const fixed = await postScores(app, world.leagueId, round.id, [{ collectibleId: rare, score: 9 }]);
  expectStatus(fixed, 200, 'correction');
  t.same(
    fixed.json().data.scores.find((s: { collectibleId: string }) => s.collectibleId === rare),
    { collectibleId: rare, score: 9 },
  );
  const corrections = (await allAuditEntries(app, { targetId: round.id })).filter(
    (e) => e.action === 'round.scores.correct',
  );
  t.equal(corrections.length, 1);
  t.same(corrections[0]?.before, { scores: [{ collectibleId: rare, score: 3 }] });
  t.same(corrections[0]?.after, { scores: [{ collectibleId: rare, score: 9 }] });
  expectStatus(await finalizeRequest(app, world.leagueId, round.id), 200, 'finalize');
  const { entries } = await wholeBoard(app, round.id);
  t.same(
    entries.map((e) => [e.userId, e.score]),
    [
      ['fix-a', 9],
      ['fix-b', 4],
    ],
    'the corrected score ranks',
  );
  const read = await call(app, 'GET', `${adminRoundUrl(world.leagueId, round.id)}/scores`, world.staff.viewer);
  expectStatus(read, 200, 'a viewer reads the scores');
  t.same(
    read.json().data.scores.find((s: { collectibleId: string }) => s.collectibleId === rare),
    { collectibleId: rare, score: 9 },
  );
  const late = await postScores(app, world.leagueId, round.id, [{ collectibleId: epic, score: 50 }]);
  t.equal(late.statusCode, 409);
  t.equal(codeOf(late), 'round_final');
  await assertNoViolations(t, app);
});

t.test('the advance-rounds job finalizes a round past its finalizesAt and pays it', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'job', { lineupSize: 1, eligible: {} });
  await giveCards(app, world, ['job-a']);
  const coins = await createReward(app, { teamId: world.staff.team.id, coins: 3 });
  const round = await openRound(app, world.leagueId, 1, {
    endsAt: inSeconds(1.2),
    finalizesAt: inSeconds(1.2),
    prizes: [{ fromRank: 1, toRank: 1, rewardId: coins.id }],
  });
  const [copy] = await copiesOf(app, 'job-a');
  expectStatus(
    await putLineup(app, tokenFor('job-a'), world.leagueId, round.id, [copy?.pullId as string]),
    200,
    'lineup',
  );
  const early = await postScores(app, world.leagueId, round.id, [{ collectibleId: copy?.collectibleId, score: 1 }]);
  t.equal(codeOf(early), 'round_not_locked');
  const tooEarly = await finalizeRequest(app, world.leagueId, round.id);
  t.equal(codeOf(tooEarly), 'round_not_locked');
  await app.jobs.run('advance-rounds', 'request');
  t.equal((await call(app, 'GET', roundUrl(world.leagueId, round.id), null)).json().data.status, 'open');
  await waitUntil(round.finalizesAt as string);
  const run = await app.jobs.run('advance-rounds', 'request');
  t.equal(run.processed, 1);
  const done = (await call(app, 'GET', roundUrl(world.leagueId, round.id), null)).json().data;
  t.equal(done.status, 'final');
  t.ok(done.prizesPaidAt);
  t.equal(done.entrants, 1);
  t.same(
    (await roundGrants(app, round.id)).map((g) => g.user_id),
    ['job-a'],
  );
  const [stored] = await sqlRows<{ status: string }>(app, sql`select status from league_rounds where id = ${round.id}`);
  t.equal(stored?.status, 'final');
  const patch = await call(app, 'PATCH', adminRoundUrl(world.leagueId, round.id), ADMIN, { payload: { name: 'x' } });
  t.equal(codeOf(patch), 'round_immutable');
  await assertNoViolations(t, app);
});
