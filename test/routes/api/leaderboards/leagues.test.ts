import { createHash } from 'node:crypto';
import t from 'tap';
import type { App } from '../../../../app.js';
import { canonicalBoardLine } from '../../../../plugins/app/leaderboards/ranks.js';
import { weekOf } from '../../../../plugins/app/leaderboards/windows.js';
import { buildTestApp, tokenFor } from '../../../support/app.js';
import { expectStatus } from '../../../support/catalog.js';
import { boardViolations, leagueBoard, leagueMe } from '../../../support/leaderboards.js';
import {
  copiesOf,
  finalizeRequest,
  giveCards,
  type LeagueWorld,
  leagueWorld,
  openRound,
  postScores,
  putLineup,
  waitUntil,
} from '../../../support/leagues.js';
import { call, codeOf } from '../../../support/teams.js';

/**
 * A league's totals: each fan's scores of the league's final rounds summed, kept from the event
 * log (`round.finalized`), with all-time, season and week windows in the league's time zone; a
 * closed window frozen once its rounds are final, with a hash recomputable from the served rows.
 */

/** A final round where each fan fields the copy of the rarity given, and every collectible scores `scores[rarity]`. */
async function finalRound(
  app: App,
  world: LeagueWorld,
  picks: Record<string, string>,
  scores: Record<string, number>,
): Promise<string> {
  const round = await openRound(app, world.leagueId, 1.5);
  for (const [fan, rarity] of Object.entries(picks)) {
    const copy = (await copiesOf(app, fan)).find((c) => c.rarity === rarity);
    expectStatus(await putLineup(app, tokenFor(fan), world.leagueId, round.id, [copy?.pullId as string]), 200, fan);
  }
  await waitUntil(round.locksAt);
  const posted = world.cards.map((card) => ({ collectibleId: card.id, score: scores[card.rarity] ?? 0 }));
  expectStatus(await postScores(app, world.leagueId, round.id, posted), 200, 'scores');
  expectStatus(await finalizeRequest(app, world.leagueId, round.id), 200, 'finalize');
  return round.id;
}

const view = (entries: { userId: string; rank: number; score: number }[]) =>
  entries.map((entry) => [entry.userId, entry.rank, entry.score]);

t.test('totals over final rounds: ties share a rank, every window, around me', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'lb', { lineupSize: 1, eligible: {}, multipliers: { legendary: 1.5 } });
  const fans = ['lb-a', 'lb-b', 'lb-c', 'lb-d'];
  await giveCards(app, world, fans);
  // Round 1: a 15 (legendary 10 × 1.5), b 10, c 10, d 3. Round 2 (other copies: the play windows overlap): a 0, b 5, c 5, d 5.
  await finalRound(
    app,
    world,
    { 'lb-a': 'legendary', 'lb-b': 'epic', 'lb-c': 'rare', 'lb-d': 'common' },
    {
      legendary: 10,
      epic: 10,
      rare: 10,
      common: 3,
    },
  );
  const before = await leagueBoard(app, world.leagueId);
  t.same(before.data.entries, [], 'nothing before the consumer counted the round');
  await app.leaderboards.consumer.catchUp();
  await finalRound(
    app,
    world,
    { 'lb-a': 'uncommon', 'lb-b': 'common', 'lb-c': 'epic', 'lb-d': 'epic' },
    {
      uncommon: 0,
      common: 5,
      epic: 5,
      legendary: 0,
      rare: 0,
    },
  );
  await app.leaderboards.consumer.catchUp();

  const allTime = await leagueBoard(app, world.leagueId);
  t.same(
    allTime.data.entries.map((entry) => [entry.rank, entry.score]),
    [
      [1, 15],
      [1, 15],
      [1, 15],
      [4, 8],
    ],
    'three fans on 15 share rank 1, the next is 4',
  );
  t.equal(allTime.data.entries[3]?.userId, 'lb-d');
  t.match(allTime.data.board, { kind: 'league', id: world.leagueId, window: 'all-time', final: false, entrants: 4 });
  // Within the tie: the first to reach 15 comes first. a reached it with round 1; b and c with
  // round 2 (one finalization: the same instant), then by user id.
  t.same(
    allTime.data.entries.slice(0, 3).map((entry) => entry.userId),
    ['lb-a', 'lb-b', 'lb-c'],
  );

  const season = await leagueBoard(app, world.leagueId, { window: 'season' });
  t.match(season.data.board, { window: 'season', windowKey: '2026-27' });
  t.same(view(season.data.entries), view(allTime.data.entries));
  const other = await leagueBoard(app, world.leagueId, { window: 'season', season: '2025-26' });
  t.same(other.data.entries, [], 'another season is empty');
  const week = await leagueBoard(app, world.leagueId, { window: 'week' });
  t.match(week.data.board, { window: 'week', windowKey: weekOf(new Date(), 'UTC').key, timeZone: 'UTC' });
  t.same(view(week.data.entries), view(allTime.data.entries));

  const me = await leagueMe(app, world.leagueId, { id: 'lb-c', token: tokenFor('lb-c') }, { around: 1 });
  t.same(
    [me.data.me, ...me.data.above, ...me.data.below].map((entry) => entry && [entry.userId, entry.rank]),
    [
      ['lb-c', 1],
      ['lb-b', 1],
      ['lb-d', 4],
    ],
  );
  const outsider = await leagueMe(app, world.leagueId, { id: 'lb-z', token: tokenFor('lb-z') });
  t.equal(outsider.data.me, null);

  const unknown = await call(app, 'GET', '/api/leaderboards/leagues/no-such-league', null);
  t.equal(unknown.statusCode, 404);
  t.equal(codeOf(unknown), 'league_not_found');
  t.same(await boardViolations(app), [], 'the rank structure counts the entries');
});

t.test('a closed week and a finished season are frozen, with a hash recomputed from the served rows', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'fz', { lineupSize: 1, eligible: {} });
  const fans = ['fz-a', 'fz-b', 'fz-c'];
  await giveCards(app, world, fans);
  await finalRound(app, world, { 'fz-a': 'epic', 'fz-b': 'rare', 'fz-c': 'common' }, { epic: 9, rare: 4, common: 4 });
  await app.leaderboards.consumer.catchUp();

  t.equal(await app.leaderboards.freezeClosed(new Date()), 0, 'the week is running and the season is current');
  const thisWeek = weekOf(new Date(), 'UTC');
  t.equal(
    await app.leaderboards.freezeClosed(new Date((thisWeek.endsAt as Date).getTime() + 1000)),
    1,
    'the week froze',
  );

  const frozenWeek = await leagueBoard(app, world.leagueId, { window: 'week', week: thisWeek.key });
  t.match(frozenWeek.data.board, { final: true, entrants: 3 });
  const lines = frozenWeek.data.entries.map((entry) =>
    canonicalBoardLine({ ...entry, position: entry.position as number, score: Math.round(entry.score * 100) }),
  );
  t.equal(createHash('sha256').update(lines.join('\n')).digest('hex'), frozenWeek.data.board.hash, 'week hash');
  t.same(
    frozenWeek.data.entries.map((entry) => [entry.position, entry.rank, entry.score]),
    [
      [1, 1, 9],
      [2, 2, 4],
      [3, 2, 4],
    ],
  );

  // The season closes once the league moves on to the next one.
  const moved = await call(app, 'PATCH', `/api/admin/leagues/${world.leagueId}`, world.staff.owner, {
    payload: { season: '2027-28' },
  });
  expectStatus(moved, 200, 'next season');
  t.equal(await app.leaderboards.freezeClosed(), 1, 'the finished season froze');
  const frozenSeason = await leagueBoard(app, world.leagueId, { window: 'season', season: '2026-27' });
  t.match(frozenSeason.data.board, { final: true, windowKey: '2026-27' });
  t.match(frozenSeason.data.board.hash, /^[0-9a-f]{64}$/);
  const current = await leagueBoard(app, world.leagueId, { window: 'season' });
  t.match(current.data.board, { windowKey: '2027-28', final: false, entrants: 0 });
  t.same(await boardViolations(app), []);
});
