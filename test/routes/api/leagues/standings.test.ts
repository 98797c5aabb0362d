import t from 'tap';
import { buildTestApp } from '../../../support/app.js';
import { expectStatus } from '../../../support/catalog.js';
import { assertNoViolations } from '../../../support/economy.js';
import {
  copiesOf,
  finalizeRequest,
  giveCards,
  leagueWorld,
  openRound,
  postScores,
  putLineup,
  type StandingView,
  waitUntil,
  wholeBoard,
} from '../../../support/leagues.js';
import { call, codeOf } from '../../../support/teams.js';
import { standingLineFromApi } from '../../../../plugins/app/leagues/rules.js';
import { createHash } from 'node:crypto';
import { tokenFor } from '../../../support/app.js';

/**
 * A round from lineups to its frozen board: scores times multipliers, competition ranks, the
 * board served by position with a cursor, the caller with the fans around them, and the hash a
 * fan recomputes from the rows the API serves.
 */

t.test('three fans on one score share rank 2, the next is 5; the hash recomputes from the served rows', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'std', { lineupSize: 1, eligible: {}, multipliers: { legendary: 1.5 } });
  const fans = ['std-a', 'std-b', 'std-c', 'std-d', 'std-e'];
  await giveCards(app, world, fans);
  const round = await openRound(app, world.leagueId, 1.5);
  // a: legendary (10 × 1.5 = 15); b, c, d: epic (10); e: common (3).
  const pick = { 'std-a': 'legendary', 'std-b': 'epic', 'std-c': 'epic', 'std-d': 'epic', 'std-e': 'common' } as Record<
    string,
    string
  >;
  for (const fan of fans) {
    const copy = (await copiesOf(app, fan)).find((c) => c.rarity === pick[fan]);
    expectStatus(
      await putLineup(app, tokenFor(fan), world.leagueId, round.id, [copy?.pullId as string]),
      200,
      `${fan} lineup`,
    );
  }
  const early = await call(app, 'GET', `/api/leaderboards/rounds/${round.id}`, null);
  t.equal(early.statusCode, 409);
  t.equal(codeOf(early), 'round_not_final');
  await waitUntil(round.locksAt);
  const scores = world.cards.map((card) => ({ collectibleId: card.id, score: card.rarity === 'common' ? 3 : 10 }));
  expectStatus(await postScores(app, world.leagueId, round.id, scores), 200, 'scores');
  const finalized = await finalizeRequest(app, world.leagueId, round.id);
  expectStatus(finalized, 200, 'finalize');
  t.equal(finalized.json().data.status, 'final');
  t.equal(finalized.json().data.entrants, 5);

  const { board, entries } = await wholeBoard(app, round.id, 2);
  t.same(
    entries.map((e: StandingView) => [e.position, e.rank, e.score]),
    [
      [1, 1, 15],
      [2, 2, 10],
      [3, 2, 10],
      [4, 2, 10],
      [5, 5, 3],
    ],
  );
  // The tie on score is broken by the earliest submission: b, c, d saved in that order.
  t.same(
    entries.slice(1, 4).map((e) => e.userId),
    ['std-b', 'std-c', 'std-d'],
  );
  t.equal(board.kind, 'round');
  t.equal(board.final, true);
  t.equal(board.entrants, 5);
  t.equal(board.hash, finalized.json().data.standingsHash);
  const recomputed = createHash('sha256')
    .update(entries.map((e) => standingLineFromApi(e)).join('\n'), 'utf8')
    .digest('hex');
  t.equal(recomputed, board.hash, 'the hash recomputed from every served page');

  // Around me: at the top, at the bottom and inside the tie.
  const me = async (fan: string, around: number) => {
    const res = await call(app, 'GET', `/api/leaderboards/rounds/${round.id}/me`, tokenFor(fan), {
      query: { around: String(around) },
    });
    expectStatus(res, 200, `me ${fan}`);
    const data = res.json().data;
    return {
      me: data.me?.position ?? null,
      above: data.above.map((e: StandingView) => e.position),
      below: data.below.map((e: StandingView) => e.position),
    };
  };
  t.same(await me('std-a', 2), { me: 1, above: [], below: [2, 3] }, 'the top: nobody above');
  t.same(await me('std-e', 2), { me: 5, above: [3, 4], below: [] }, 'the bottom: nobody below');
  t.same(await me('std-c', 1), { me: 3, above: [2], below: [4] }, 'inside the tie, by position');
  t.same(await me('std-nobody', 3), { me: null, above: [], below: [] }, 'no lineup: no line');
  const anonymous = await call(app, 'GET', `/api/leaderboards/rounds/${round.id}/me`, null);
  t.equal(anonymous.statusCode, 401);

  const badCursor = await call(app, 'GET', `/api/leaderboards/rounds/${round.id}`, null, { query: { cursor: 'nope' } });
  t.equal(badCursor.statusCode, 400);
  t.equal(codeOf(badCursor), 'invalid_cursor');
  const beyond = Buffer.from(JSON.stringify({ position: 2 ** 40 })).toString('base64url');
  const farCursor = await call(app, 'GET', `/api/leaderboards/rounds/${round.id}`, null, { query: { cursor: beyond } });
  t.equal(codeOf(farCursor), 'invalid_cursor', 'a position no board reaches');
  const lastPage = Buffer.from(JSON.stringify({ position: 5 })).toString('base64url');
  const past = await call(app, 'GET', `/api/leaderboards/rounds/${round.id}`, null, { query: { cursor: lastPage } });
  t.same(past.json().data.entries, [], 'after the last position: an empty page');
  t.equal(past.json().nextCursor, null);
  const unknown = await call(app, 'GET', '/api/leaderboards/rounds/no-such-round', null);
  t.equal(unknown.statusCode, 404);
  await assertNoViolations(t, app);
});
