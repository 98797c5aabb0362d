import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { packs } from '../../../../db/schema.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import {
  assertValidation,
  ADMIN,
  ADMIN_PACK_KEYS,
  type AdminPackView,
  allAuditEntries,
  FAN,
  fakeCursor,
  getAdminPack,
  insertTeam,
  packInStatus,
  sortedKeys,
} from '../../../support/catalog.js';

/** GET/POST /api/admin/packs and GET/PATCH /api/admin/packs/{id}. */

const post = (app: App, payload: unknown, token = ADMIN) =>
  app.inject({
    method: 'POST',
    url: '/api/admin/packs',
    headers: bearer(token),
    payload: payload as Record<string, unknown>,
  });
const patch = (app: App, id: string, payload: unknown, token = ADMIN) =>
  app.inject({
    method: 'PATCH',
    url: `/api/admin/packs/${id}`,
    headers: bearer(token),
    payload: payload as Record<string, unknown>,
  });
const list = (app: App, query: Record<string, string> = {}, token = ADMIN) =>
  app.inject({ method: 'GET', url: '/api/admin/packs', headers: bearer(token), query });

async function countPacks(app: App): Promise<number> {
  return (await app.db.orm.select({ id: packs.id }).from(packs)).length;
}

t.test('POST creates a draft with defaults (201)', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(app, { name: 'Starter' });
  t.equal(res.statusCode, 201);
  t.same(Object.keys(res.json()).sort(), ['data', 'success']);
  const pack = res.json().data as AdminPackView;
  t.same(sortedKeys(pack), ADMIN_PACK_KEYS);
  t.match(pack, {
    teamId: null,
    name: 'Starter',
    description: '',
    imageUrl: null,
    status: 'draft',
    price: 0,
    cardsPerPack: 5,
    supply: null,
    available: 0,
    publishedAt: null,
    archivedAt: null,
    pool: [],
  });
  t.match(pack.id, /^[0-9a-f-]{36}$/);
  t.equal(pack.createdAt, pack.updatedAt);
  t.same(await getAdminPack(app, pack.id), pack, 'stored as answered');

  const team = await insertTeam(app);
  const full = await post(app, {
    name: '  Team pack  ',
    teamId: team,
    description: 'All the cards',
    imageUrl: 'https://img.example/pack.png',
    price: 150,
    cardsPerPack: 100,
    supply: 1,
  });
  t.equal(full.statusCode, 201);
  t.match(full.json().data, {
    teamId: team,
    name: 'Team pack',
    description: 'All the cards',
    imageUrl: 'https://img.example/pack.png',
    price: 150,
    cardsPerPack: 100,
    supply: 1,
    status: 'draft',
  });
  const [row] = await app.db.orm.select().from(packs).where(eq(packs.id, full.json().data.id));
  t.match(row, {
    teamId: team,
    name: 'Team pack',
    status: 'draft',
    price: 150,
    cardsPerPack: 100,
    supply: 1,
    publishedAt: null,
  });

  const explicitNull = await post(app, { name: 'Global', teamId: null, supply: null, imageUrl: null });
  t.equal(explicitNull.statusCode, 201);
  t.match(explicitNull.json().data, { teamId: null, supply: null, imageUrl: null });
});

t.test('POST refuses an unknown team and invalid bodies, creating nothing', async (t) => {
  const app = await buildTestApp(t);
  const unknownTeam = await post(app, { name: 'Orphan', teamId: 'no-such-team' });
  t.equal(unknownTeam.statusCode, 404);
  t.equal(unknownTeam.json().error.code, 'team_not_found');

  const cases: [string, Record<string, unknown>, string][] = [
    ['no name', {}, '/name'],
    ['empty name', { name: '' }, '/name'],
    ['whitespace name', { name: '   ' }, '/name'],
    ['name of 121 characters', { name: 'n'.repeat(121) }, '/name'],
    ['name a number', { name: 5 }, '/name'],
    ['cardsPerPack 0', { name: 'P', cardsPerPack: 0 }, '/cardsPerPack'],
    ['cardsPerPack 101', { name: 'P', cardsPerPack: 101 }, '/cardsPerPack'],
    ['cardsPerPack "5"', { name: 'P', cardsPerPack: '5' }, '/cardsPerPack'],
    ['price -1', { name: 'P', price: -1 }, '/price'],
    ['price 1.5', { name: 'P', price: 1.5 }, '/price'],
    ['price "5"', { name: 'P', price: '5' }, '/price'],
    ['supply 0', { name: 'P', supply: 0 }, '/supply'],
    ['imageUrl not a url', { name: 'P', imageUrl: 'not a url' }, '/imageUrl'],
    ['unknown field', { name: 'P', status: 'active' }, '/status'],
    ['teamId ""', { name: 'P', teamId: '' }, '/teamId'],
  ];
  for (const [label, body, path] of cases) assertValidation(t, await post(app, body), [path], label);
  t.equal(await countPacks(app), 0, 'nothing was created');
  t.same(await allAuditEntries(app), [], 'nothing was audited');
});

t.test('imageUrl must be an http(s) URL', async (t) => {
  const app = await buildTestApp(t);
  // schemas/packs.ts documents imageUrl as an http(s) URL; the public list hands it to front ends.
  for (const imageUrl of ['javascript:alert(1)', 'ftp://files.example/pack.png']) {
    const res = await post(app, { name: 'P', imageUrl });
    t.equal(res.statusCode, 400, `imageUrl ${imageUrl} is refused`);
  }
  for (const imageUrl of ['https://img.example/a.png', 'http://img.example/a.png']) {
    t.equal((await post(app, { name: 'P', imageUrl })).statusCode, 201, `imageUrl ${imageUrl} is accepted`);
  }
});

t.test('GET lists packs of every status, newest first, filtered by status and teamId', async (t) => {
  const app = await buildTestApp(t);
  const team = await insertTeam(app);
  const draft = (await packInStatus(app, 'draft', { pack: { name: 'Draft' } })).pack;
  const active = (await packInStatus(app, 'active', { pack: { name: 'Active' } })).pack;
  const archived = (await packInStatus(app, 'archived', { pack: { name: 'Archived' } })).pack;
  const teamDraft = (await packInStatus(app, 'draft', { pack: { name: 'Team draft', teamId: team } })).pack;
  const teamActive = (await packInStatus(app, 'active', { pack: { name: 'Team active', teamId: team } })).pack;
  const newestFirst = [teamActive, teamDraft, archived, active, draft];

  const all = await list(app);
  t.equal(all.statusCode, 200);
  t.same(Object.keys(all.json()).sort(), ['data', 'nextCursor', 'success']);
  t.equal(all.json().nextCursor, null);
  t.same(
    all.json().data.map((pack: AdminPackView) => pack.id),
    newestFirst.map((pack) => pack.id),
    'newest first by creation',
  );
  const summaryKeys = [...ADMIN_PACK_KEYS.filter((key) => key !== 'pool'), 'poolSize'].sort();
  for (const pack of all.json().data as AdminPackView[]) t.same(sortedKeys(pack), summaryKeys);
  const { pool, ...fields } = await getAdminPack(app, active.id);
  t.same(
    all.json().data.find((pack: AdminPackView) => pack.id === active.id),
    { ...fields, poolSize: pool.length },
    'the list shows the view of GET one, with the size of the pool instead of the pool',
  );

  const ids = (res: Awaited<ReturnType<typeof list>>) => res.json().data.map((pack: AdminPackView) => pack.id);
  t.same(ids(await list(app, { status: 'draft' })), [teamDraft.id, draft.id]);
  t.same(ids(await list(app, { status: 'active' })), [teamActive.id, active.id]);
  t.same(ids(await list(app, { status: 'archived' })), [archived.id]);
  t.same(ids(await list(app, { teamId: team })), [teamActive.id, teamDraft.id]);
  t.same(ids(await list(app, { teamId: team, status: 'draft' })), [teamDraft.id]);
  t.same(ids(await list(app, { teamId: 'no-such-team' })), []);

  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const res: Awaited<ReturnType<typeof list>> = await list(app, { limit: '2', ...(cursor ? { cursor } : {}) });
    t.equal(res.statusCode, 200);
    pages.push(ids(res));
    cursor = res.json().nextCursor;
  } while (cursor && pages.length < 10);
  t.same(pages, [[teamActive.id, teamDraft.id], [archived.id, active.id], [draft.id]]);

  const badStatus = await list(app, { status: 'deleted' });
  t.equal(badStatus.statusCode, 400);
  t.equal(badStatus.json().error.code, 'validation_failed');
  for (const cursor of ['garbage', fakeCursor({}), fakeCursor([1, 2]), fakeCursor(['not-a-date', 'x'])]) {
    const res = await list(app, { cursor });
    t.equal(res.statusCode, 400, `cursor ${cursor}`);
    t.equal(res.json().error.code, 'invalid_cursor');
  }
});

t.test('GET limit defaults to 50 and is at most 200', async (t) => {
  const app = await buildTestApp(t);
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  await app.db.orm.insert(packs).values(
    Array.from({ length: 201 }, (_, i) => ({
      id: randomUUID(),
      name: `Bulk ${i}`,
      createdAt: new Date(base + i * 1000),
    })),
  );
  const byDefault = await list(app);
  t.equal(byDefault.json().data.length, 50);
  t.equal(byDefault.json().data[0].name, 'Bulk 200');
  t.type(byDefault.json().nextCursor, 'string');
  const max = await list(app, { limit: '200' });
  t.equal(max.statusCode, 200);
  t.equal(max.json().data.length, 200);
  const last = await list(app, { limit: '200', cursor: max.json().nextCursor });
  t.same(
    last.json().data.map((pack: AdminPackView) => pack.name),
    ['Bulk 0'],
  );
  t.equal(last.json().nextCursor, null);
  for (const limit of ['201', '0']) {
    const res = await list(app, { limit });
    t.equal(res.statusCode, 400, `limit=${limit}`);
    t.equal(res.json().error.code, 'validation_failed');
  }
});

t.test('pagination reaches every row, also rows timestamped by the database (microseconds)', async (t) => {
  const app = await buildTestApp(t);
  // created_at defaults to now(): PostgreSQL keeps microseconds, JavaScript dates (and cursors) milliseconds.
  await app.db.orm
    .insert(packs)
    .values(Array.from({ length: 3 }, (_, i) => ({ id: randomUUID(), name: `Defaulted ${i}` })));
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: Awaited<ReturnType<typeof list>> = await list(app, { limit: '1', ...(cursor ? { cursor } : {}) });
    seen.push(...res.json().data.map((pack: AdminPackView) => pack.id));
    cursor = res.json().nextCursor;
    pages++;
  } while (cursor && pages < 10);
  t.equal(new Set(seen).size, 3, `every pack is listed once (saw ${seen.length} in ${pages} pages)`);
});

t.test('GET one answers any status with its pool; unknown is 404 pack_not_found', async (t) => {
  const app = await buildTestApp(t);
  const { pack, collectibles } = await packInStatus(app, 'archived', {
    pack: { cardsPerPack: 2 },
    pool: [
      { quantity: 3, weight: 1, collectible: { name: 'A', rarity: 'rare' } },
      { quantity: 1, weight: 3, collectible: { name: 'B', rarity: 'epic' } },
    ],
  });
  const res = await app.inject({ method: 'GET', url: `/api/admin/packs/${pack.id}`, headers: bearer(ADMIN) });
  t.equal(res.statusCode, 200);
  t.same(Object.keys(res.json()).sort(), ['data', 'success']);
  const got = res.json().data as AdminPackView;
  t.equal(got.status, 'archived');
  const [a, b] = collectibles as unknown as [{ id: string }, { id: string }];
  const expected = [
    { collectibleId: a.id, name: 'A', rarity: 'rare', weight: 1, remaining: 3, probability: 0.5 },
    { collectibleId: b.id, name: 'B', rarity: 'epic', weight: 3, remaining: 1, probability: 0.5 },
  ].sort((x, y) => (x.collectibleId < y.collectibleId ? -1 : 1));
  t.same(got.pool, expected, 'the pool, ordered by collectible id');
  t.equal(got.available, 2);

  const unknown = await app.inject({ method: 'GET', url: '/api/admin/packs/no-such-pack', headers: bearer(ADMIN) });
  t.equal(unknown.statusCode, 404);
  t.equal(unknown.json().error.code, 'pack_not_found');
  const tooLong = await app.inject({
    method: 'GET',
    url: `/api/admin/packs/${'p'.repeat(129)}`,
    headers: bearer(ADMIN),
  });
  t.equal(tooLong.statusCode, 400);
});

t.test(
  'PATCH edits name, description and imageUrl in any status; price, cardsPerPack, supply only in draft',
  async (t) => {
    const app = await buildTestApp(t);
    for (const status of ['draft', 'active', 'archived'] as const) {
      const { pack } = await packInStatus(app, status, {
        pack: { name: 'Before', imageUrl: 'https://img.example/a.png' },
      });
      const res = await patch(app, pack.id, { name: '  After  ', description: 'New words', imageUrl: null });
      t.equal(res.statusCode, 200, `rename a ${status} pack`);
      t.same(Object.keys(res.json()).sort(), ['data', 'success']);
      const changed = res.json().data as AdminPackView;
      t.same(
        { ...changed, updatedAt: pack.updatedAt },
        { ...pack, name: 'After', description: 'New words', imageUrl: null },
        `${status}: only the given fields changed`,
      );
      t.ok(changed.updatedAt > pack.updatedAt || changed.updatedAt === pack.updatedAt, 'updatedAt does not go back');
      t.same(await getAdminPack(app, pack.id), changed, `${status}: stored`);
    }

    const draft = (await packInStatus(app, 'draft', { pack: { cardsPerPack: 5 }, pool: [{ quantity: 12 }] })).pack;
    t.equal(draft.available, 2);
    const priced = await patch(app, draft.id, { price: 300, cardsPerPack: 3, supply: 3 });
    t.equal(priced.statusCode, 200);
    t.match(priced.json().data, { price: 300, cardsPerPack: 3, supply: 3, available: 3, status: 'draft' });
    const unlimited = await patch(app, draft.id, { supply: null });
    t.match(unlimited.json().data, { supply: null, available: 4 });

    for (const status of ['active', 'archived'] as const) {
      const { pack } = await packInStatus(app, status, { pack: { price: 10 } });
      const auditBefore = (await allAuditEntries(app, { targetId: pack.id })).length;
      for (const [field, value] of [
        ['price', 20],
        ['cardsPerPack', 2],
        ['supply', 5],
        ['supply', null],
      ] as const) {
        const res = await patch(app, pack.id, { name: 'Renamed with it', [field]: value });
        t.equal(res.statusCode, 409, `${field} on a ${status} pack`);
        t.equal(res.json().error.code, 'pack_not_draft');
        t.match(res.json().error.message, new RegExp(status));
        t.ok(
          res.json().error.details?.some((detail: { path: string }) => detail.path === `/${field}`),
          `${field} on a ${status} pack: the field is named`,
        );
      }
      const both = await patch(app, pack.id, { price: 1, supply: 9 });
      t.same(
        both
          .json()
          .error.details.map((detail: { path: string }) => detail.path)
          .sort(),
        ['/price', '/supply'],
        'every refused field is named',
      );
      t.same(await getAdminPack(app, pack.id), pack, `${status}: nothing changed, not even the name sent alongside`);
      t.equal(
        (await allAuditEntries(app, { targetId: pack.id })).length,
        auditBefore,
        'no audit row for a refused edit',
      );
    }
  },
);

t.test('PATCH refuses an empty or invalid body and an unknown pack', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'draft');
  const empty = await patch(app, pack.id, {});
  t.equal(empty.statusCode, 400, 'PATCH {}');
  t.equal(empty.json().error.code, 'validation_failed');
  const cases: [string, Record<string, unknown>, string][] = [
    ['empty name', { name: '' }, '/name'],
    ['whitespace name', { name: ' \t ' }, '/name'],
    ['cardsPerPack 0', { cardsPerPack: 0 }, '/cardsPerPack'],
    ['cardsPerPack 101', { cardsPerPack: 101 }, '/cardsPerPack'],
    ['price -1', { price: -1 }, '/price'],
    ['supply 0', { supply: 0 }, '/supply'],
    ['status', { status: 'active' }, '/status'],
    ['teamId (the team is fixed)', { teamId: null }, '/teamId'],
  ];
  for (const [label, body, path] of cases) assertValidation(t, await patch(app, pack.id, body), [path], label);
  t.same(await getAdminPack(app, pack.id), pack, 'nothing changed');

  const unknown = await patch(app, 'no-such-pack', { name: 'X' });
  t.equal(unknown.statusCode, 404);
  t.equal(unknown.json().error.code, 'pack_not_found');
});

t.test('non-admins get 403 and anonymous callers 401 on every admin pack endpoint', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'draft');
  const requests = [
    { method: 'GET' as const, url: '/api/admin/packs' },
    { method: 'POST' as const, url: '/api/admin/packs', payload: { name: 'Sneaky' } },
    { method: 'GET' as const, url: `/api/admin/packs/${pack.id}` },
    { method: 'PATCH' as const, url: `/api/admin/packs/${pack.id}`, payload: { name: 'Sneaky' } },
  ];
  for (const request of requests) {
    const forbidden = await app.inject({ ...request, headers: bearer(FAN) });
    t.equal(forbidden.statusCode, 403, `${request.method} ${request.url} as a fan`);
    t.equal(forbidden.json().error.code, 'forbidden');
    const anonymous = await app.inject(request);
    t.equal(anonymous.statusCode, 401, `${request.method} ${request.url} without a token`);
  }
  for (const url of ['/api/admin/packs/no-such-pack']) {
    for (const method of ['GET', 'PATCH'] as const) {
      const res = await app.inject({
        method,
        url,
        headers: bearer(FAN),
        ...(method === 'PATCH' ? { payload: { name: 'X' } } : {}),
      });
      t.equal(res.statusCode, 403, `${method} an unknown pack as a fan: the same answer as for an existing one`);
    }
  }
  t.equal(await countPacks(app), 1, 'the fan created nothing');
  t.same(await getAdminPack(app, pack.id), pack, 'the fan changed nothing');
});
