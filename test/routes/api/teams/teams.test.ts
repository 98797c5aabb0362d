import t from 'tap';
import { buildTestApp } from '../../../support/app.js';
import { fakeCursor, sortedKeys } from '../../../support/catalog.js';
import { call, codeOf, createTeam, signIn, TEAM_KEYS, type TeamView } from '../../../support/teams.js';

/** GET /api/teams and GET /api/teams/{teamId}: public, newest first, paginated. */

const newestFirst = (a: TeamView, b: TeamView) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1;

t.test('GET /api/teams and /api/teams/{teamId}', async (t) => {
  const app = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });

  await t.test('no teams: an empty page', async (t) => {
    const res = await call(app, 'GET', '/api/teams', null);
    t.equal(res.statusCode, 200);
    t.same(res.json(), { success: true, data: [], nextCursor: null });
  });

  const created: TeamView[] = [];
  for (let i = 0; i < 7; i++) {
    created.push(await createTeam(app, { name: `Listed ${i}`, slug: `listed-${i}` }));
    // Distinct milliseconds, so "newest first" is the creation order reversed.
    await new Promise((resolve) => setTimeout(resolve, 3));
  }

  await t.test('public, newest first, every team once', async (t) => {
    const res = await call(app, 'GET', '/api/teams', null);
    t.equal(res.statusCode, 200);
    const body = res.json();
    t.same(sortedKeys(body), ['data', 'nextCursor', 'success']);
    t.equal(body.nextCursor, null);
    for (const team of body.data) t.same(sortedKeys(team), TEAM_KEYS);
    t.same(body.data, [...created].sort(newestFirst), 'the created teams, newest first');
    t.same(
      body.data.map((team: TeamView) => team.slug),
      ['listed-6', 'listed-5', 'listed-4', 'listed-3', 'listed-2', 'listed-1', 'listed-0'],
      'creation order, reversed',
    );
  });

  await t.test('pagination: limit and cursor walk the list without gaps or repeats', async (t) => {
    const seen: TeamView[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await call(app, 'GET', '/api/teams', null, { query: { limit: '3', ...(cursor ? { cursor } : {}) } });
      t.equal(res.statusCode, 200);
      const body = res.json();
      t.ok(body.data.length <= 3);
      seen.push(...body.data);
      cursor = body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    t.equal(pages, 3, '7 teams in pages of 3');
    t.same(seen, [...created].sort(newestFirst));
  });

  await t.test('bad queries: 400', async (t) => {
    for (const query of [
      { limit: '0' },
      { limit: '201' },
      { limit: 'many' },
      { cursor: 'not-a-cursor' },
      { cursor: fakeCursor({ nope: 1 }) },
    ] as Array<Record<string, string>>) {
      const res = await call(app, 'GET', '/api/teams', null, { query });
      t.equal(res.statusCode, 400, `${JSON.stringify(query)}: 400`);
    }
  });

  await t.test('one team by id; an unknown id is 404 team_not_found', async (t) => {
    const team = created[3] as TeamView;
    const res = await call(app, 'GET', `/api/teams/${team.id}`, null);
    t.equal(res.statusCode, 200);
    t.same(res.json(), { success: true, data: team });
    for (const id of ['no-such-team', crypto.randomUUID(), 'x'.repeat(128)]) {
      const missing = await call(app, 'GET', `/api/teams/${id}`, null);
      t.equal(missing.statusCode, 404, `${id.slice(0, 12)}: 404`);
      t.equal(codeOf(missing), 'team_not_found');
    }
    const tooLong = await call(app, 'GET', `/api/teams/${'x'.repeat(129)}`, null);
    t.equal(tooLong.statusCode, 400, 'an id of 129 characters: 400');
  });
});
