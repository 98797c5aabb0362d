import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { collectibles } from '../../../../db/schema.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import {
  ADMIN,
  allAuditEntries,
  type CollectibleView,
  createCollectible,
  FAN,
  fakeCursor,
  insertTeam,
  packInStatus,
  sortedKeys,
} from '../../../support/catalog.js';

/** GET/POST /api/admin/collectibles and GET/PATCH /api/admin/collectibles/{id}. */

const COLLECTIBLE_KEYS = [
  'createdAt',
  'description',
  'id',
  'imageUrl',
  'minted',
  'name',
  'points',
  'rarity',
  'teamId',
  'updatedAt',
];
const RARITIES = ['common', 'uncommon', 'rare', 'epic', 'legendary'] as const;

const post = (app: App, payload: Record<string, unknown>, token = ADMIN) =>
  app.inject({ method: 'POST', url: '/api/admin/collectibles', headers: bearer(token), payload });
const patch = (app: App, id: string, payload: Record<string, unknown>, token = ADMIN) =>
  app.inject({ method: 'PATCH', url: `/api/admin/collectibles/${id}`, headers: bearer(token), payload });
const get = (app: App, id: string, token = ADMIN) =>
  app.inject({ method: 'GET', url: `/api/admin/collectibles/${id}`, headers: bearer(token) });
const list = (app: App, query: Record<string, string> = {}, token = ADMIN) =>
  app.inject({ method: 'GET', url: '/api/admin/collectibles', headers: bearer(token), query });
const ids = (res: Awaited<ReturnType<typeof list>>) => res.json().data.map((c: CollectibleView) => c.id);

t.test('POST creates a collectible (201) with defaults rarity common and points 0', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(app, { name: '  Rookie  ' });
  t.equal(res.statusCode, 201);
  t.same(Object.keys(res.json()).sort(), ['data', 'success']);
  const created = res.json().data as CollectibleView;
  t.same(sortedKeys(created), COLLECTIBLE_KEYS);
  t.match(created, {
    teamId: null,
    name: 'Rookie',
    description: '',
    imageUrl: null,
    rarity: 'common',
    points: 0,
    minted: 0,
  });
  t.match(created.id, /^[0-9a-f-]{36}$/);
  const fetched = await get(app, created.id);
  t.equal(fetched.statusCode, 200);
  t.same(fetched.json(), { success: true, data: created }, 'GET answers what was stored');

  const team = await insertTeam(app);
  const full = await post(app, {
    name: 'Golden Striker',
    teamId: team,
    description: 'The captain in gold.',
    imageUrl: 'https://img.example/gold.png',
    rarity: 'legendary',
    points: 500,
  });
  t.equal(full.statusCode, 201);
  t.match(full.json().data, {
    teamId: team,
    name: 'Golden Striker',
    description: 'The captain in gold.',
    imageUrl: 'https://img.example/gold.png',
    rarity: 'legendary',
    points: 500,
    minted: 0,
  });
  const [row] = await app.db.orm.select().from(collectibles).where(eq(collectibles.id, full.json().data.id));
  t.match(row, { teamId: team, rarity: 'legendary', points: 500 });

  const unknownTeam = await post(app, { name: 'Orphan', teamId: 'no-such-team' });
  t.equal(unknownTeam.statusCode, 404);
  t.equal(unknownTeam.json().error.code, 'team_not_found');
});

t.test('invalid bodies are 400 naming the field, and store nothing', async (t) => {
  const app = await buildTestApp(t);
  const cases: [string, Record<string, unknown>, string][] = [
    ['rarity mythic', { name: 'C', rarity: 'mythic' }, '/rarity'],
    ['points -1', { name: 'C', points: -1 }, '/points'],
    ['points "5"', { name: 'C', points: '5' }, '/points'],
    ['points 1.5', { name: 'C', points: 1.5 }, '/points'],
    ['imageUrl not a url', { name: 'C', imageUrl: 'not a url' }, '/imageUrl'],
    ['no name', {}, '/name'],
    ['whitespace name', { name: '  ' }, '/name'],
    ['unknown field', { name: 'C', minted: 3 }, '/minted'],
  ];
  for (const [label, body, path] of cases) {
    const res = await post(app, body);
    t.equal(res.statusCode, 400, label);
    t.equal(res.json().error.code, 'validation_failed', label);
    t.ok(
      res.json().error.details.some((detail: { path: string }) => detail.path === path),
      `${label}: names ${path}`,
    );
  }
  t.equal((await app.db.orm.select().from(collectibles)).length, 0, 'nothing stored');

  const script = await post(app, { name: 'C', imageUrl: 'javascript:alert(1)' });
  t.equal(script.statusCode, 400, 'imageUrl javascript:alert(1) is refused (documented as an http(s) URL)');

  const c = await createCollectible(app, { name: 'Valid', rarity: 'rare', points: 3 });
  for (const [label, body, path] of [
    ['rarity mythic', { rarity: 'mythic' }, '/rarity'],
    ['points -1', { points: -1 }, '/points'],
    ['points "5"', { points: '5' }, '/points'],
    ['imageUrl not a url', { imageUrl: 'not a url' }, '/imageUrl'],
    ['teamId (fixed)', { teamId: null }, '/teamId'],
  ] as const) {
    const res = await patch(app, c.id, body);
    t.equal(res.statusCode, 400, `PATCH ${label}`);
    t.ok(
      res.json().error.details.some((detail: { path: string }) => detail.path === path),
      `PATCH ${label}: names ${path}`,
    );
  }
  const empty = await patch(app, c.id, {});
  t.equal(empty.statusCode, 400, 'PATCH {}');
  t.same((await get(app, c.id)).json().data, c, 'unchanged');
});

t.test('GET lists newest first, filtered by teamId and rarity, paginated', async (t) => {
  const app = await buildTestApp(t);
  const team = await insertTeam(app);
  const made: CollectibleView[] = [];
  for (const rarity of RARITIES) made.push(await createCollectible(app, { name: `Global ${rarity}`, rarity }));
  const teamRare = await createCollectible(app, { name: 'Team rare', rarity: 'rare', teamId: team });
  const teamCommon = await createCollectible(app, { name: 'Team common', teamId: team });
  made.push(teamRare, teamCommon);
  const newestFirst = [...made].reverse();

  const all = await list(app);
  t.equal(all.statusCode, 200);
  t.same(Object.keys(all.json()).sort(), ['data', 'nextCursor', 'success']);
  t.same(
    ids(all),
    newestFirst.map((c) => c.id),
  );
  t.equal(all.json().nextCursor, null);
  for (const c of all.json().data) t.same(sortedKeys(c), COLLECTIBLE_KEYS);

  t.same(ids(await list(app, { teamId: team })), [teamCommon.id, teamRare.id]);
  t.same(
    ids(await list(app, { rarity: 'rare' })),
    newestFirst.filter((c) => c.rarity === 'rare').map((c) => c.id),
  );
  t.same(ids(await list(app, { rarity: 'rare', teamId: team })), [teamRare.id]);
  t.same(ids(await list(app, { rarity: 'legendary', teamId: team })), []);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: Awaited<ReturnType<typeof list>> = await list(app, { limit: '3', ...(cursor ? { cursor } : {}) });
    t.equal(res.statusCode, 200);
    t.ok(res.json().data.length <= 3);
    seen.push(...ids(res));
    cursor = res.json().nextCursor;
    pages++;
  } while (cursor && pages < 10);
  t.equal(pages, 3);
  t.same(
    seen,
    newestFirst.map((c) => c.id),
    'every collectible once, in order',
  );

  for (const [label, query] of [
    ['rarity mythic', { rarity: 'mythic' }],
    ['limit 201', { limit: '201' }],
    ['limit 0', { limit: '0' }],
  ] as const) {
    const res = await list(app, query);
    t.equal(res.statusCode, 400, label);
    t.equal(res.json().error.code, 'validation_failed');
  }
  for (const cursor of ['garbage', fakeCursor({}), fakeCursor([1, 2]), fakeCursor(['not-a-date', 'x'])]) {
    const res = await list(app, { cursor });
    t.equal(res.statusCode, 400);
    t.equal(res.json().error.code, 'invalid_cursor');
  }
});

t.test('GET limit defaults to 50 and is at most 200', async (t) => {
  const app = await buildTestApp(t);
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  await app.db.orm.insert(collectibles).values(
    Array.from({ length: 201 }, (_, i) => ({
      id: randomUUID(),
      name: `Bulk ${i}`,
      createdAt: new Date(base + i * 1000),
    })),
  );
  const byDefault = await list(app);
  t.equal(byDefault.json().data.length, 50);
  t.equal(byDefault.json().data[0].name, 'Bulk 200');
  const max = await list(app, { limit: '200' });
  t.equal(max.json().data.length, 200);
  const last = await list(app, { limit: '200', cursor: max.json().nextCursor });
  t.same(
    last.json().data.map((c: CollectibleView) => c.name),
    ['Bulk 0'],
  );
  t.equal(last.json().nextCursor, null);
});

t.test('PATCH edits the given fields; the public odds show the change at once', async (t) => {
  const app = await buildTestApp(t);
  const {
    pack,
    collectibles: [card],
  } = await packInStatus(app, 'active', {
    pool: [{ quantity: 10, collectible: { name: 'Old name', rarity: 'common', points: 1 } }],
  });
  const c = card as CollectibleView;
  // Warm the public cache first: the rename must not be hidden behind it.
  const warm = await app.inject({ method: 'GET', url: `/api/packs/${pack.id}` });
  t.equal(warm.json().data.odds[0].collectible.name, 'Old name');

  const res = await patch(app, c.id, { name: 'New name', rarity: 'epic', points: 40, description: 'Upgraded' });
  t.equal(res.statusCode, 200);
  t.same(Object.keys(res.json()).sort(), ['data', 'success']);
  const updated = res.json().data as CollectibleView;
  t.same(
    { ...updated, updatedAt: c.updatedAt },
    { ...c, name: 'New name', rarity: 'epic', points: 40, description: 'Upgraded' },
    'only the given fields changed',
  );
  t.ok(updated.updatedAt >= c.updatedAt);
  t.same((await get(app, c.id)).json().data, updated, 'stored');

  const odds = await app.inject({ method: 'GET', url: `/api/packs/${pack.id}` });
  t.equal(odds.statusCode, 200);
  t.same(odds.json().data.odds[0].collectible, {
    id: c.id,
    teamId: null,
    name: 'New name',
    description: 'Upgraded',
    imageUrl: null,
    rarity: 'epic',
    points: 40,
  });
  t.not(odds.headers.etag, warm.headers.etag, 'a new ETag');
  const admin = await app.inject({ method: 'GET', url: `/api/admin/packs/${pack.id}`, headers: bearer(ADMIN) });
  t.match(admin.json().data.pool[0], { name: 'New name', rarity: 'epic' });

  const only = await patch(app, c.id, { points: 0 });
  t.same({ ...only.json().data, updatedAt: updated.updatedAt }, { ...updated, points: 0 }, 'a single field');
});

t.test('unknown ids are 404 collectible_not_found', async (t) => {
  const app = await buildTestApp(t);
  const got = await get(app, 'no-such-collectible');
  t.equal(got.statusCode, 404);
  t.same(Object.keys(got.json()).sort(), ['error', 'success']);
  t.equal(got.json().error.code, 'collectible_not_found');
  const patched = await patch(app, 'no-such-collectible', { name: 'X' });
  t.equal(patched.statusCode, 404);
  t.equal(patched.json().error.code, 'collectible_not_found');
  t.same(await allAuditEntries(app), [], 'no audit row');
  const tooLong = await get(app, 'c'.repeat(129));
  t.equal(tooLong.statusCode, 400);
});

t.test('non-admins get 403 and anonymous callers 401; nothing changes', async (t) => {
  const app = await buildTestApp(t);
  const c = await createCollectible(app, { name: 'Mine' });
  const requests = [
    { method: 'GET' as const, url: '/api/admin/collectibles' },
    { method: 'POST' as const, url: '/api/admin/collectibles', payload: { name: 'Sneaky' } },
    { method: 'GET' as const, url: `/api/admin/collectibles/${c.id}` },
    { method: 'PATCH' as const, url: `/api/admin/collectibles/${c.id}`, payload: { name: 'Sneaky' } },
  ];
  for (const request of requests) {
    const forbidden = await app.inject({ ...request, headers: bearer(FAN) });
    t.equal(forbidden.statusCode, 403, `${request.method} ${request.url} as a fan`);
    t.equal(forbidden.json().error.code, 'forbidden');
    const anonymous = await app.inject(request);
    t.equal(anonymous.statusCode, 401, `${request.method} ${request.url} without a token`);
  }
  const unknown = await get(app, 'no-such-collectible', FAN);
  t.equal(unknown.statusCode, 403, 'an unknown id answers a fan like an existing one');
  t.same((await get(app, c.id)).json().data, c, 'unchanged');
  t.equal((await app.db.orm.select().from(collectibles)).length, 1, 'nothing created');
});
