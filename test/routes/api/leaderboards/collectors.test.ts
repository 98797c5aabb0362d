import t from 'tap';
import { canonicalBoardLine } from '../../../../plugins/app/leaderboards/ranks.js';
import { weekOf } from '../../../../plugins/app/leaderboards/windows.js';
import { createHash } from 'node:crypto';
import type { App } from '../../../../app.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { fakeCursor, packInStatus } from '../../../support/catalog.js';
import { buyPack, errorCode, expectStatus, type Fan, fund, openPack, signIn } from '../../../support/economy.js';
import { boardViolations, collectorBoard, collectorsMe, type BoardEntry } from '../../../support/leaderboards.js';

/**
 * The collector board: fans ranked by the points of what they pulled, kept from the event log.
 * Ties share a rank ("1224") and are ordered by who reached the score first, never by storage
 * order; around-me is clamped at both ends; closed weeks are frozen with a hash anyone can check.
 */

/** Fans who pulled 30, 20, 20, 20 and 10 points, in that order of opening (so B reached 20 before C, C before D). */
async function fiveCollectors(app: App) {
  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 1, cardsPerPack: 1 },
    pool: [{ quantity: 100, collectible: { points: 10 } }],
  });
  const fans: Fan[] = [];
  for (const [name, opens] of [
    ['a-first', 3],
    ['b-tied', 2],
    ['c-tied', 2],
    ['d-tied', 2],
    ['e-last', 1],
  ] as const) {
    const fan = await signIn(app, `collector-${name}`);
    await fund(app, fan, 10);
    for (let n = 0; n < opens; n++) {
      const { userPackId } = await buyPack(app, fan, pack.id);
      expectStatus(await openPack(app, fan, pack.id, { userPackId }), 200, 'open');
    }
    fans.push(fan);
  }
  await app.leaderboards.consumer.catchUp();
  return fans;
}

const view = (entries: BoardEntry[]) => entries.map((entry) => [entry.userId, entry.rank, entry.score]);

t.test('ties share a rank and the next rank counts every fan above', async (t) => {
  const app = await buildTestApp(t);
  const [a, b, c, d, e] = (await fiveCollectors(app)) as Fan[];
  const page = await collectorBoard(app);
  t.same(
    view(page.data.entries),
    [
      [a?.id, 1, 30],
      [b?.id, 2, 20],
      [c?.id, 2, 20],
      [d?.id, 2, 20],
      [e?.id, 5, 10],
    ],
    'three fans on one score share rank 2, the next is 5; the tie in the order its fans reached the score',
  );
  t.match(page.data.board, { kind: 'collectors', id: null, window: 'all-time', final: false, hash: null, entrants: 5 });
  t.ok(
    page.data.entries.every((entry) => entry.position === null),
    'a live board has no positions',
  );
  t.equal(page.nextCursor, null);

  // Pages of two: the same order and ranks, a tie split over two pages included.
  const pages: BoardEntry[] = [];
  let cursor: string | undefined;
  do {
    const next = await collectorBoard(app, { limit: 2, ...(cursor ? { cursor } : {}) });
    pages.push(...next.data.entries);
    cursor = next.nextCursor ?? undefined;
  } while (cursor);
  t.same(view(pages), view(page.data.entries), 'paged reads give the same board');

  // Equal scores reached at the same instant are ordered by user id, not by the order rows were written.
  t.ok((b?.id ?? '') < (c?.id ?? ''), 'the fixture reaches 20 in user id order too');
  t.ok(await boardViolations(app).then((found) => found.length === 0), 'the rank structure matches the entries');
});

t.test('around me: clamped at the top and the bottom, inside a tie', async (t) => {
  const app = await buildTestApp(t);
  const [a, b, c, d, e] = (await fiveCollectors(app)) as Fan[];
  const ids = (entries: BoardEntry[]) => entries.map((entry) => entry.userId);

  const top = await collectorsMe(app, a as Fan, { around: 2 });
  t.match(top.data.me, { userId: a?.id, rank: 1, score: 30 });
  t.same(ids(top.data.above), [], 'nobody above the first');
  t.same(ids(top.data.below), [b?.id, c?.id]);

  const bottom = await collectorsMe(app, e as Fan, { around: 2 });
  t.match(bottom.data.me, { userId: e?.id, rank: 5 });
  t.same(ids(bottom.data.above), [c?.id, d?.id], 'the two above, best first');
  t.same(ids(bottom.data.below), [], 'nobody below the last');

  const tied = await collectorsMe(app, c as Fan, { around: 1 });
  t.match(tied.data.me, { userId: c?.id, rank: 2 });
  t.same(
    tied.data.above.map((entry) => [entry.userId, entry.rank]),
    [[b?.id, 2]],
    'the fan before in the tie, same rank',
  );
  t.same(
    tied.data.below.map((entry) => [entry.userId, entry.rank]),
    [[d?.id, 2]],
  );

  const wide = await collectorsMe(app, c as Fan, { around: 50 });
  t.same(ids(wide.data.above), [a?.id, b?.id]);
  t.same(ids(wide.data.below), [d?.id, e?.id]);

  const none = await collectorsMe(app, await signIn(app, 'collector-nothing'));
  t.same(none.data, { ...none.data, me: null, above: [], below: [] }, 'a fan with no pulls is not on the board');

  const anonymous = await app.inject({ method: 'GET', url: '/api/leaderboards/collectors/me' });
  expectStatus(anonymous, 401, 'me without a token');
});

t.test('the week window; a closed week frozen with a hash recomputable from the served rows', async (t) => {
  const app = await buildTestApp(t);
  const [a, , , , e] = (await fiveCollectors(app)) as Fan[];
  const thisWeek = weekOf(new Date(), 'UTC');
  const week = await collectorBoard(app, { window: 'week' });
  t.match(week.data.board, { window: 'week', windowKey: thisWeek.key, timeZone: 'UTC', final: false, entrants: 5 });
  t.equal(week.data.entries[0]?.userId, a?.id);

  const other = await collectorBoard(app, { window: 'week', week: '2020-W01' });
  t.match(other.data, { board: { windowKey: '2020-W01', entrants: 0, final: false }, entries: [] }, 'an empty week');

  // Before its end (and grace) the week stays live; after it, the job freezes it.
  t.equal(await app.leaderboards.freezeClosed(new Date()), 0, 'the current week is not closed');
  const liveCursor = (await collectorBoard(app, { window: 'week', limit: 2 })).nextCursor as string;
  const later = new Date((thisWeek.endsAt as Date).getTime() + 10 * 60_000);
  t.equal(await app.leaderboards.freezeClosed(later), 1, 'the week froze');
  t.equal(await app.leaderboards.freezeClosed(later), 0, 'and only once');

  const frozen = await collectorBoard(app, { window: 'week', week: thisWeek.key, limit: 500 });
  t.match(frozen.data.board, { final: true, entrants: 5 });
  t.match(frozen.data.board.hash, /^[0-9a-f]{64}$/);
  t.same(
    frozen.data.entries.map((entry) => [entry.position, entry.rank]),
    [
      [1, 1],
      [2, 2],
      [3, 2],
      [4, 2],
      [5, 5],
    ],
  );
  const lines = frozen.data.entries.map((entry) =>
    canonicalBoardLine({ ...entry, position: entry.position as number, score: Math.round(entry.score * 100) }),
  );
  t.equal(createHash('sha256').update(lines.join('\n')).digest('hex'), frozen.data.board.hash, 'hash recomputed');

  // A cursor of the live board goes on from the same fan once the board is frozen.
  const resumed = await collectorBoard(app, { window: 'week', week: thisWeek.key, cursor: liveCursor });
  t.same(
    resumed.data.entries.map((entry) => entry.position),
    [3, 4, 5],
  );
  const me = await collectorsMe(app, e as Fan, { window: 'week', week: thisWeek.key, around: 1 });
  t.match(me.data, { me: { rank: 5, position: 5 }, above: [{ position: 4 }], below: [] });

  // Pulls after the freeze still count all-time, never in the frozen week.
  const before = (await collectorBoard(app)).data.entries.find((entry) => entry.userId === e?.id)?.score;
  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 1, cardsPerPack: 1 },
    pool: [{ quantity: 5, collectible: { points: 7 } }],
  });
  const { userPackId } = await buyPack(app, e as Fan, pack.id);
  expectStatus(await openPack(app, e as Fan, pack.id, { userPackId }), 200, 'open after the freeze');
  await app.leaderboards.consumer.catchUp();
  t.equal((await collectorBoard(app)).data.entries.find((entry) => entry.userId === e?.id)?.score, (before ?? 0) + 7);
  const still = await collectorBoard(app, { window: 'week', week: thisWeek.key, limit: 500 });
  t.same(still.data, frozen.data, 'the frozen week did not move');
});

t.test('wrong windows and cursors are 400s in the error envelope', async (t) => {
  const app = await buildTestApp(t);
  const ask = (query: Record<string, string>) =>
    app.inject({ method: 'GET', url: '/api/leaderboards/collectors', query });
  for (const [query, code] of [
    [{ window: 'season' }, 'validation_failed'],
    [{ season: '2026' }, 'validation_failed'],
    [{ week: '2026-W10' }, 'validation_failed'],
    [{ window: 'week', week: '2026-W54' }, 'validation_failed'],
    [{ window: 'week', week: '2021-W53' }, 'validation_failed'],
    [{ window: 'month' }, 'validation_failed'],
    [{ limit: '0' }, 'validation_failed'],
    [{ limit: '501' }, 'validation_failed'],
    [{ cursor: 'not-a-cursor' }, 'invalid_cursor'],
    [{ cursor: fakeCursor(['l', 1, 'yesterday', 'x']) }, 'invalid_cursor'],
    [{ cursor: fakeCursor(['f', -1]) }, 'invalid_cursor'],
    [{ cursor: fakeCursor(['f', 3]) }, 'invalid_cursor'],
  ] as const) {
    const res = await ask(query);
    expectStatus(res, 400, JSON.stringify(query));
    t.equal(errorCode(res), code, JSON.stringify(query));
  }
  expectStatus(await ask({ window: 'week', week: '2020-W53' }), 200, '2020 had 53 weeks');
  const me = await app.inject({
    method: 'GET',
    url: '/api/leaderboards/collectors/me',
    query: { around: '51' },
    headers: bearer((await signIn(app, 'me-wrong')).token),
  });
  expectStatus(me, 400, 'around past 50');
});

t.test('the first page of a live board is served from memory for LEADERBOARD_CACHE', async (t) => {
  const app = await buildTestApp(t, { LEADERBOARD_CACHE: '1 hour' });
  const [a] = (await fiveCollectors(app)) as Fan[];
  const first = await collectorBoard(app);
  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 1, cardsPerPack: 1 },
    pool: [{ quantity: 5, collectible: { points: 100 } }],
  });
  const late = await signIn(app, 'collector-late');
  await fund(app, late, 1);
  const { userPackId } = await buyPack(app, late, pack.id);
  expectStatus(await openPack(app, late, pack.id, { userPackId }), 200, 'open');
  await app.leaderboards.consumer.catchUp();
  t.same((await collectorBoard(app)).data, first.data, 'the cached top page');
  t.equal(
    (await collectorBoard(app, { limit: 10 })).data.entries[0]?.userId,
    late.id,
    'another page size is read anew',
  );
  const mine = await collectorsMe(app, a as Fan);
  t.match(mine.data.me, { rank: 2 }, `my rank is never cached: ${JSON.stringify(mine.data)}`);
});
