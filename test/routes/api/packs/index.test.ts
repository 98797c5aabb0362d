import { randomUUID } from 'node:crypto';
import t from 'tap';
import { packs } from '../../../../db/schema.js';
import { buildTestApp } from '../../../support/app.js';
import {
  type AdminPackView,
  createPack,
  fakeCursor,
  insertTeam,
  PUBLIC_PACK_KEYS,
  packInStatus,
  sortedKeys,
} from '../../../support/catalog.js';

/** [spec] GET /api/packs: `{ packs, nextCursor }`, active packs only, newest first. */

type PublicPack = Record<string, unknown> & { id: string };

/** Newest first by publishedAt, ties by id descending: the order the list promises. */
const newestFirst = (a: AdminPackView, b: AdminPackView) =>
  (b.publishedAt ?? '').localeCompare(a.publishedAt ?? '') || b.id.localeCompare(a.id);

t.test('the body is exactly { packs, nextCursor }: active packs only, public fields only, newest first', async (t) => {
  const app = await buildTestApp(t);
  const first = await packInStatus(app, 'active', {
    pack: {
      name: 'First',
      description: 'One',
      imageUrl: 'https://img.example/first.png',
      price: 100,
      cardsPerPack: 2,
      supply: 50,
    },
    pool: [{ quantity: 4 }],
  });
  const second = await packInStatus(app, 'active', { pack: { name: 'Second' }, pool: [{ quantity: 5 }] });
  await packInStatus(app, 'draft', { pack: { name: 'Draft' } });
  await packInStatus(app, 'archived', { pack: { name: 'Archived' } });
  await createPack(app, { name: 'Empty draft' });

  const res = await app.inject({ method: 'GET', url: '/api/packs' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^application\/json/);
  const body = res.json();
  t.same(Object.keys(body).sort(), ['nextCursor', 'packs'], 'no success key, no data key');
  t.equal(body.nextCursor, null);
  const expected = [first.pack, second.pack].sort(newestFirst);
  t.same(
    body.packs.map((pack: PublicPack) => pack.id),
    expected.map((pack) => pack.id),
    'only the two active packs, newest first',
  );
  for (const pack of body.packs as PublicPack[]) {
    t.same(sortedKeys(pack), PUBLIC_PACK_KEYS, 'public fields only');
    for (const key of ['status', 'supply', 'pool', 'archivedAt', 'createdAt', 'updatedAt'])
      t.notOk(key in pack, `no ${key}`);
  }
  const listedFirst = body.packs.find((pack: PublicPack) => pack.id === first.pack.id);
  t.same(listedFirst, {
    id: first.pack.id,
    teamId: null,
    name: 'First',
    description: 'One',
    imageUrl: 'https://img.example/first.png',
    price: 100,
    cardsPerPack: 2,
    available: 2,
    publishedAt: first.pack.publishedAt,
  });
  t.match(listedFirst.publishedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

t.test('an empty catalog is { packs: [], nextCursor: null }', async (t) => {
  const app = await buildTestApp(t);
  await packInStatus(app, 'draft');
  const res = await app.inject({ method: 'GET', url: '/api/packs' });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { packs: [], nextCursor: null });
});

t.test('limit defaults to 100 and is at most 500; 0 and 501 are 400', async (t) => {
  const app = await buildTestApp(t);
  // 101 active packs, inserted directly: publishing each through the API adds nothing here.
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  await app.db.orm.insert(packs).values(
    Array.from({ length: 101 }, (_, i) => ({
      id: randomUUID(),
      name: `Bulk ${i}`,
      status: 'active' as const,
      publishedAt: new Date(base + i * 1000),
    })),
  );

  const byDefault = await app.inject({ method: 'GET', url: '/api/packs' });
  t.equal(byDefault.statusCode, 200);
  t.equal(byDefault.json().packs.length, 100);
  t.type(byDefault.json().nextCursor, 'string');
  t.equal(byDefault.json().packs[0].name, 'Bulk 100', 'newest first');

  const rest = await app.inject({ method: 'GET', url: '/api/packs', query: { cursor: byDefault.json().nextCursor } });
  t.equal(rest.statusCode, 200);
  t.same(
    rest.json().packs.map((pack: PublicPack) => pack.name),
    ['Bulk 0'],
  );
  t.equal(rest.json().nextCursor, null);

  const max = await app.inject({ method: 'GET', url: '/api/packs', query: { limit: '500' } });
  t.equal(max.statusCode, 200);
  t.equal(max.json().packs.length, 101);
  t.equal(max.json().nextCursor, null);

  for (const limit of ['501', '0', '-1', '1.5', 'ten']) {
    const res = await app.inject({ method: 'GET', url: '/api/packs', query: { limit } });
    t.equal(res.statusCode, 400, `limit=${limit}`);
    t.equal(res.json().success, false);
    t.equal(res.json().error.code, 'validation_failed');
    t.ok(
      res.json().error.details.some((detail: { path: string }) => detail.path === '/querystring/limit'),
      `limit=${limit} is named`,
    );
  }
});

t.test('pages of 2 through 5 packs list every pack exactly once, in order', async (t) => {
  const app = await buildTestApp(t);
  const created: AdminPackView[] = [];
  for (let i = 0; i < 5; i++) created.push((await packInStatus(app, 'active', { pack: { name: `P${i}` } })).pack);
  const expected = created.sort(newestFirst).map((pack) => pack.id);

  const seen: string[] = [];
  const pageSizes: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: Awaited<ReturnType<typeof app.inject>> = await app.inject({
      method: 'GET',
      url: '/api/packs',
      query: { limit: '2', ...(cursor ? { cursor } : {}) },
    });
    t.equal(res.statusCode, 200);
    const body: { packs: PublicPack[]; nextCursor: string | null } = res.json();
    t.same(Object.keys(body).sort(), ['nextCursor', 'packs']);
    seen.push(...body.packs.map((pack) => pack.id));
    pageSizes.push(body.packs.length);
    cursor = body.nextCursor;
    pages++;
  } while (cursor && pages < 10);
  t.same(pageSizes, [2, 2, 1]);
  t.same(seen, expected, 'every pack once, newest first');
  t.equal(cursor, null, 'the last page has nextCursor null');
});

t.test('a cursor the API did not issue is 400 invalid_cursor', async (t) => {
  const app = await buildTestApp(t);
  await packInStatus(app, 'active');
  const cursors = {
    garbage: 'garbage',
    'base64 of {}': fakeCursor({}),
    'base64 of [1,2]': fakeCursor([1, 2]),
    'base64 of ["not-a-date","x"]': fakeCursor(['not-a-date', 'x']),
    'base64 of ["2026-01-01T00:00:00.000Z",""]': fakeCursor(['2026-01-01T00:00:00.000Z', '']),
    'base64 of a 3-item array': fakeCursor(['2026-01-01T00:00:00.000Z', 'x', 'y']),
  };
  for (const [label, cursor] of Object.entries(cursors)) {
    const res = await app.inject({ method: 'GET', url: '/api/packs', query: { cursor } });
    t.equal(res.statusCode, 400, label);
    t.equal(res.json().success, false, label);
    t.equal(res.json().error.code, 'invalid_cursor', label);
    t.type(res.json().error.message, 'string');
  }
  const valid = await app.inject({
    method: 'GET',
    url: '/api/packs',
    query: { cursor: fakeCursor(['2999-01-01T00:00:00.000Z', 'z']) },
  });
  t.equal(valid.statusCode, 200, 'a well-formed key is accepted');
  t.equal(valid.json().packs.length, 1);
});

t.test('teamId filters the list to one team', async (t) => {
  const app = await buildTestApp(t);
  const teamA = await insertTeam(app, 'A');
  const teamB = await insertTeam(app, 'B');
  const a1 = await packInStatus(app, 'active', { pack: { teamId: teamA, name: 'A1' } });
  const a2 = await packInStatus(app, 'active', { pack: { teamId: teamA, name: 'A2' } });
  await packInStatus(app, 'draft', { pack: { teamId: teamA, name: 'A draft' } });
  const b1 = await packInStatus(app, 'active', { pack: { teamId: teamB, name: 'B1' } });
  const global = await packInStatus(app, 'active', { pack: { name: 'Global' } });

  const ofA = await app.inject({ method: 'GET', url: '/api/packs', query: { teamId: teamA } });
  t.equal(ofA.statusCode, 200);
  t.same(
    ofA.json().packs.map((pack: PublicPack) => pack.id),
    [a1.pack, a2.pack].sort(newestFirst).map((pack) => pack.id),
  );
  t.ok(ofA.json().packs.every((pack: PublicPack) => pack.teamId === teamA));

  const ofB = await app.inject({ method: 'GET', url: '/api/packs', query: { teamId: teamB } });
  t.same(
    ofB.json().packs.map((pack: PublicPack) => pack.id),
    [b1.pack.id],
  );

  const unknown = await app.inject({ method: 'GET', url: '/api/packs', query: { teamId: 'no-such-team' } });
  t.equal(unknown.statusCode, 200);
  t.same(unknown.json(), { packs: [], nextCursor: null });

  const paged = await app.inject({ method: 'GET', url: '/api/packs', query: { teamId: teamA, limit: '1' } });
  t.equal(paged.json().packs.length, 1);
  const next = await app.inject({
    method: 'GET',
    url: '/api/packs',
    query: { teamId: teamA, limit: '1', cursor: paged.json().nextCursor },
  });
  t.equal(next.json().packs.length, 1);
  t.equal(next.json().nextCursor, null);
  t.notSame(next.json().packs[0].id, paged.json().packs[0].id);

  const all = await app.inject({ method: 'GET', url: '/api/packs' });
  t.equal(all.json().packs.length, 4, 'without the filter every active pack, global included');
  t.ok(all.json().packs.some((pack: PublicPack) => pack.id === global.pack.id));

  const tooLong = await app.inject({ method: 'GET', url: '/api/packs', query: { teamId: 'x'.repeat(129) } });
  t.equal(tooLong.statusCode, 400);
});

t.test('available is floor(total remaining / cardsPerPack), capped by supply', async (t) => {
  const app = await buildTestApp(t);
  const cases = [
    { pack: { name: 'twelve by five', cardsPerPack: 5 }, pool: [{ quantity: 7 }, { quantity: 5 }], available: 2 },
    { pack: { name: 'exactly one', cardsPerPack: 5 }, pool: [{ quantity: 5 }], available: 1 },
    { pack: { name: 'supply caps', cardsPerPack: 5, supply: 1 }, pool: [{ quantity: 12 }], available: 1 },
    {
      pack: { name: 'pool caps', cardsPerPack: 3, supply: 10 },
      pool: [{ quantity: 10 }, { quantity: 3 }],
      available: 4,
    },
    { pack: { name: 'one card', cardsPerPack: 1 }, pool: [{ quantity: 1000, weight: 0.5 }], available: 1000 },
  ];
  const ids = new Map<string, number>();
  for (const item of cases) {
    const { pack } = await packInStatus(app, 'active', { pack: item.pack, pool: item.pool });
    ids.set(pack.id, item.available);
    t.equal(pack.available, item.available, `admin view of ${item.pack.name}`);
  }
  const res = await app.inject({ method: 'GET', url: '/api/packs' });
  t.equal(res.json().packs.length, cases.length);
  for (const pack of res.json().packs as PublicPack[]) {
    t.equal(pack.available, ids.get(pack.id), `available of ${pack.name}`);
  }
});

t.test('unknown query parameters (a cache-buster) are ignored and share the cached response', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active');
  const plain = await app.inject({ url: '/api/packs' });
  const busted = await app.inject({ url: '/api/packs?_=1732270000&utm_source=mail' });
  t.equal(busted.statusCode, 200);
  t.same(
    busted.json().packs.map((p: PublicPack) => p.id),
    [pack.id],
  );
  t.equal(busted.headers.etag, plain.headers.etag, 'the same cached body');
});
