import t from 'tap';
import type { App } from '../../../../app.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import {
  ADMIN,
  type AdminPackView,
  type AuditEntry,
  allAuditEntries,
  createCollectible,
  createPack,
  FAN,
  fakeCursor,
  insertTeam,
  packAction,
  packInStatus,
  sortedKeys,
} from '../../../support/catalog.js';

/** GET /api/admin/audit-log: every admin change, newest first. */

const ENTRY_KEYS = ['action', 'actorId', 'after', 'before', 'createdAt', 'id', 'targetId', 'targetType', 'teamId'];

const get = (app: App, query: Record<string, string> = {}, token = ADMIN) =>
  app.inject({ method: 'GET', url: '/api/admin/audit-log', headers: bearer(token), query });

/** What the audit log keeps of a pack: its fields, without the pool and the derived `available`. */
function packRecord(view: AdminPackView): Omit<AdminPackView, 'pool' | 'available'> {
  const { pool: _pool, available: _available, ...record } = view;
  return record;
}

t.test('each catalog change appends one entry: who, what, before and after; newest first', async (t) => {
  const app = await buildTestApp(t);
  const team = await insertTeam(app);

  const collectible = await createCollectible(app, { teamId: team, name: 'Card', rarity: 'rare' });
  const pack = await createPack(app, { teamId: team, name: 'Team pack', cardsPerPack: 2 });
  const added = await packAction(app, pack.id, {
    action: 'addCollectible',
    collectibleId: collectible.id,
    quantity: 4,
  });
  const published = await packAction(app, pack.id, { action: 'publish' });
  const renamed = await app.inject({
    method: 'PATCH',
    url: `/api/admin/packs/${pack.id}`,
    headers: bearer(ADMIN),
    payload: { name: 'Renamed pack' },
  });
  const collectibleRenamed = await app.inject({
    method: 'PATCH',
    url: `/api/admin/collectibles/${collectible.id}`,
    headers: bearer(ADMIN),
    payload: { name: 'Renamed card' },
  });
  t.same(
    [added.statusCode, published.statusCode, renamed.statusCode, collectibleRenamed.statusCode],
    [200, 200, 200, 200],
  );

  const res = await get(app);
  t.equal(res.statusCode, 200);
  t.same(Object.keys(res.json()).sort(), ['data', 'nextCursor', 'success']);
  t.equal(res.json().success, true);
  t.equal(res.json().nextCursor, null);
  const entries = res.json().data as AuditEntry[];
  t.same(
    entries.map((entry) => entry.action),
    ['collectible.update', 'pack.update', 'pack.publish', 'pack.addCollectible', 'pack.create', 'collectible.create'],
    'newest first',
  );
  for (let i = 1; i < entries.length; i++) {
    t.ok(
      (entries[i - 1] as AuditEntry).createdAt >= (entries[i] as AuditEntry).createdAt,
      'createdAt does not increase down the list',
    );
  }
  for (const entry of entries) {
    t.same(sortedKeys(entry), ENTRY_KEYS);
    t.equal(entry.actorId, 'root', `${entry.action}: the actor`);
    t.equal(entry.teamId, team, `${entry.action}: the team`);
    t.match(entry.id, /^[0-9a-f-]{36}$/);
    t.match(entry.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
  const [collectibleUpdate, packUpdate, packPublish, packAdd, packCreate, collectibleCreate] = entries as AuditEntry[] &
    [AuditEntry, AuditEntry, AuditEntry, AuditEntry, AuditEntry, AuditEntry];

  t.match(collectibleCreate, { targetType: 'collectible', targetId: collectible.id, before: null });
  t.same(collectibleCreate.after, collectible, 'after: the collectible as created');

  t.match(packCreate, { targetType: 'pack', targetId: pack.id, before: null });
  t.same(
    packCreate.after,
    packRecord(pack),
    'after: the pack as created (its fields; the pool is audited entry by entry)',
  );

  const afterAdd = added.json().data.pack as AdminPackView;
  t.match(packAdd, { targetType: 'pack', targetId: pack.id });
  t.same(packAdd.before, null, 'before the add: no such entry');
  t.same(
    packAdd.after,
    { collectibleId: collectible.id, weight: 1, remaining: 4 },
    'after the add: the entry, not the whole pool',
  );

  const afterPublish = published.json().data.pack as AdminPackView;
  t.match(packPublish, {
    targetType: 'pack',
    targetId: pack.id,
    before: { status: 'draft', publishedAt: null },
    after: { status: 'active' },
  });
  t.same(packPublish.before, packRecord(afterAdd), 'before the publish: the pack after the add');
  t.same(packPublish.after, packRecord(afterPublish));
  t.type((packPublish.after as AdminPackView).publishedAt, 'string');

  t.match(packUpdate, {
    targetType: 'pack',
    targetId: pack.id,
    before: { name: 'Team pack' },
    after: { name: 'Renamed pack', status: 'active' },
  });
  t.same(packUpdate.after, packRecord(renamed.json().data));

  t.match(collectibleUpdate, {
    targetType: 'collectible',
    targetId: collectible.id,
    before: { name: 'Card', rarity: 'rare' },
    after: { name: 'Renamed card', rarity: 'rare' },
  });
  t.same(collectibleUpdate.after, collectibleRenamed.json().data);
});

t.test('filters by teamId and targetId, and paginates', async (t) => {
  const app = await buildTestApp(t);
  const teamA = await insertTeam(app, 'A');
  const teamB = await insertTeam(app, 'B');
  const a = await packInStatus(app, 'active', { pack: { teamId: teamA } }); // collectible.create, pack.create, add, publish
  const b = await packInStatus(app, 'draft', { pack: { teamId: teamB } }); // pack.create, collectible.create, add
  const global = await packInStatus(app, 'draft'); // pack.create, collectible.create, add

  const all = await allAuditEntries(app);
  t.equal(all.length, 10);

  const ofA = (await get(app, { teamId: teamA })).json().data as AuditEntry[];
  t.equal(ofA.length, 4);
  t.ok(ofA.every((entry) => entry.teamId === teamA));
  t.same(
    ofA.map((entry) => entry.id),
    all.filter((entry) => entry.teamId === teamA).map((entry) => entry.id),
    'the same order as the full log',
  );
  const ofB = (await get(app, { teamId: teamB })).json().data as AuditEntry[];
  t.same(ofB.map((entry) => entry.action).sort(), ['collectible.create', 'pack.addCollectible', 'pack.create']);
  t.same((await get(app, { teamId: 'no-such-team' })).json().data, []);

  const ofPack = (await get(app, { targetId: a.pack.id })).json().data as AuditEntry[];
  t.same(
    ofPack.map((entry) => entry.action),
    ['pack.publish', 'pack.addCollectible', 'pack.create'],
  );
  t.ok(ofPack.every((entry) => entry.targetId === a.pack.id));
  const ofCollectible = (await get(app, { targetId: (global.collectibles[0] as { id: string }).id })).json()
    .data as AuditEntry[];
  t.same(
    ofCollectible.map((entry) => entry.action),
    ['collectible.create'],
  );
  t.same((await get(app, { targetId: b.pack.id, teamId: teamA })).json().data, [], 'both filters apply');
  t.equal((await get(app, { targetId: b.pack.id, teamId: teamB })).json().data.length, 2);

  const seen: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const res: Awaited<ReturnType<typeof get>> = await get(app, { limit: '4', ...(cursor ? { cursor } : {}) });
    t.equal(res.statusCode, 200);
    sizes.push(res.json().data.length);
    seen.push(...res.json().data.map((entry: AuditEntry) => entry.id));
    cursor = res.json().nextCursor;
  } while (cursor && sizes.length < 10);
  t.same(sizes, [4, 4, 2]);
  t.same(
    seen,
    all.map((entry) => entry.id),
    'every entry once, in order',
  );

  for (const cursor of ['garbage', fakeCursor({}), fakeCursor([1, 2]), fakeCursor(['not-a-date', 'x'])]) {
    const res = await get(app, { cursor });
    t.equal(res.statusCode, 400);
    t.equal(res.json().error.code, 'invalid_cursor');
  }
  for (const limit of ['0', '201']) {
    t.equal((await get(app, { limit })).statusCode, 400, `limit=${limit}`);
  }
});

t.test('the page size defaults to 50', async (t) => {
  const app = await buildTestApp(t);
  for (let i = 0; i < 51; i++) await createCollectible(app, { name: `C${i}` });
  const res = await get(app);
  t.equal(res.json().data.length, 50);
  t.equal(res.json().data[0].after.name, 'C50');
  const rest = await get(app, { cursor: res.json().nextCursor });
  t.same(
    rest.json().data.map((entry: AuditEntry) => (entry.after as { name: string }).name),
    ['C0'],
  );
  t.equal(rest.json().nextCursor, null);
  t.equal((await get(app, { limit: '200' })).json().data.length, 51);
});

t.test('rejected requests write no audit row', async (t) => {
  const app = await buildTestApp(t);
  const teamA = await insertTeam(app, 'A');
  const teamB = await insertTeam(app, 'B');
  const active = await packInStatus(app, 'active', { pack: { teamId: teamA } });
  const draft = await createPack(app, { teamId: teamA, cardsPerPack: 5 });
  const ofB = await createCollectible(app, { teamId: teamB });
  const countBefore = (await allAuditEntries(app)).length;

  const rejected: [string, () => ReturnType<typeof packAction>, number][] = [
    ['publish an active pack (409)', () => packAction(app, active.pack.id, { action: 'publish' }), 409],
    ['publish an empty draft (409)', () => packAction(app, draft.id, { action: 'publish' }), 409],
    [
      'add to an active pack (409)',
      () => packAction(app, active.pack.id, { action: 'addCollectible', collectibleId: ofB.id }),
      409,
    ],
    [
      'add another team’s collectible (409)',
      () => packAction(app, draft.id, { action: 'addCollectible', collectibleId: ofB.id }),
      409,
    ],
    [
      'add an unknown collectible (404)',
      () => packAction(app, draft.id, { action: 'addCollectible', collectibleId: 'nope' }),
      404,
    ],
    [
      'remove what is not in the pool (404)',
      () => packAction(app, draft.id, { action: 'removeCollectible', collectibleId: ofB.id }),
      404,
    ],
    ['act on an unknown pack (404)', () => packAction(app, 'no-such-pack', { action: 'archive' }), 404],
    ['a 400 body', () => packAction(app, draft.id, { action: 'publish', quantity: 1 }), 400],
    ['a fan (403)', () => packAction(app, draft.id, { action: 'archive' }, FAN), 403],
    [
      'price of an active pack (409)',
      () =>
        app.inject({
          method: 'PATCH',
          url: `/api/admin/packs/${active.pack.id}`,
          headers: bearer(ADMIN),
          payload: { price: 3 },
        }),
      409,
    ],
    [
      'PATCH an unknown pack (404)',
      () =>
        app.inject({ method: 'PATCH', url: '/api/admin/packs/nope', headers: bearer(ADMIN), payload: { name: 'X' } }),
      404,
    ],
    [
      'PATCH a pack with {} (400)',
      () => app.inject({ method: 'PATCH', url: `/api/admin/packs/${draft.id}`, headers: bearer(ADMIN), payload: {} }),
      400,
    ],
    [
      'create a pack for an unknown team (404)',
      () =>
        app.inject({
          method: 'POST',
          url: '/api/admin/packs',
          headers: bearer(ADMIN),
          payload: { name: 'X', teamId: 'nope' },
        }),
      404,
    ],
    [
      'create a collectible for an unknown team (404)',
      () =>
        app.inject({
          method: 'POST',
          url: '/api/admin/collectibles',
          headers: bearer(ADMIN),
          payload: { name: 'X', teamId: 'nope' },
        }),
      404,
    ],
    [
      'create a collectible with a bad rarity (400)',
      () =>
        app.inject({
          method: 'POST',
          url: '/api/admin/collectibles',
          headers: bearer(ADMIN),
          payload: { name: 'X', rarity: 'mythic' },
        }),
      400,
    ],
    [
      'PATCH an unknown collectible (404)',
      () =>
        app.inject({
          method: 'PATCH',
          url: '/api/admin/collectibles/nope',
          headers: bearer(ADMIN),
          payload: { name: 'X' },
        }),
      404,
    ],
    [
      'a fan creates a pack (403)',
      () => app.inject({ method: 'POST', url: '/api/admin/packs', headers: bearer(FAN), payload: { name: 'X' } }),
      403,
    ],
  ];
  for (const [label, request, status] of rejected) {
    const res = await request();
    t.equal(res.statusCode, status, label);
    t.equal((await allAuditEntries(app)).length, countBefore, `${label}: no audit row`);
  }
});

t.test('non-admins get 403 and anonymous callers 401', async (t) => {
  const app = await buildTestApp(t);
  const team = await insertTeam(app);
  await createCollectible(app, { teamId: team });
  for (const query of [{}, { teamId: team }, { targetId: 'x' }] as Record<string, string>[]) {
    const res = await get(app, query, FAN);
    t.equal(res.statusCode, 403, `fan, query ${JSON.stringify(query)}`);
    t.equal(res.json().success, false);
    t.equal(res.json().error.code, 'forbidden');
  }
  const anonymous = await app.inject({ method: 'GET', url: '/api/admin/audit-log' });
  t.equal(anonymous.statusCode, 401);
  t.match(anonymous.headers['www-authenticate'], /^Bearer/);
});
