import { eq, sql } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { packs } from '../../../../db/schema.js';
import { listKey, packKey } from '../../../../plugins/app/packs/catalog-cache.js';
import { bearer, buildTestApp, createTestDatabase } from '../../../support/app.js';
import { ADMIN, applyAction, createCollectible, packInStatus } from '../../../support/catalog.js';

/**
 * The public catalog's HTTP caching (ETag, Cache-Control, 304) and its in-memory cache, which
 * every change must invalidate at once on this instance and, through NOTIFY, on the others.
 */

const list = (app: App, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url: '/api/packs', headers });
const detail = (app: App, id: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url: `/api/packs/${id}`, headers });
const listedIds = (res: Awaited<ReturnType<typeof list>>) => res.json().packs.map((pack: { id: string }) => pack.id);

for (const [label, request] of [
  ['GET /api/packs', (app: App, _id: string, headers?: Record<string, string>) => list(app, headers)],
  ['GET /api/packs/{id}', detail],
] as const) {
  t.test(`${label}: ETag, Cache-Control and 304`, async (t) => {
    const app = await buildTestApp(t);
    const { pack } = await packInStatus(app, 'active');

    const first = await request(app, pack.id);
    t.equal(first.statusCode, 200);
    const etag = first.headers.etag as string;
    t.match(etag, /^"[^"]+"$/, 'a strong, quoted ETag');
    t.equal(first.headers['cache-control'], 'public, max-age=5');
    t.match(first.headers['content-type'], /^application\/json/);

    const again = await request(app, pack.id);
    t.equal(again.headers.etag, etag, 'the same ETag while nothing changes');
    t.equal(again.body, first.body);

    for (const [what, ifNoneMatch] of [
      ['the ETag', etag],
      ['the weak form', `W/${etag}`],
      ['a list holding it', `"other", ${etag}`],
      ['*', '*'],
    ] as const) {
      const res = await request(app, pack.id, { 'if-none-match': ifNoneMatch });
      t.equal(res.statusCode, 304, `If-None-Match with ${what}`);
      t.equal(res.body, '', `${what}: an empty body`);
      t.equal(res.headers.etag, etag, `${what}: the ETag is repeated`);
      t.equal(res.headers['cache-control'], 'public, max-age=5');
    }

    const other = await request(app, pack.id, { 'if-none-match': '"some-other-etag"' });
    t.equal(other.statusCode, 200, 'another ETag gets the body');
    t.equal(other.body, first.body);
    t.equal(other.headers.etag, etag);
  });
}

t.test('a change drops the cached catalog at once and changes the ETag', async (t) => {
  const app = await buildTestApp(t);
  const kept = (await packInStatus(app, 'active', { pack: { name: 'Kept' } })).pack;
  const gone = (await packInStatus(app, 'active', { pack: { name: 'Gone' } })).pack;

  const before = await list(app);
  t.same(listedIds(before).sort(), [kept.id, gone.id].sort());
  const detailBefore = await detail(app, gone.id);
  t.equal(detailBefore.statusCode, 200);

  await applyAction(app, gone.id, { action: 'archive' });
  const after = await list(app);
  t.same(listedIds(after), [kept.id], 'the archived pack is gone immediately');
  t.not(after.headers.etag, before.headers.etag, 'a new ETag');
  const stale = await list(app, { 'if-none-match': before.headers.etag as string });
  t.equal(stale.statusCode, 200, 'the old ETag no longer matches');
  t.same(listedIds(stale), [kept.id]);
  const detailAfter = await detail(app, gone.id, { 'if-none-match': detailBefore.headers.etag as string });
  t.equal(detailAfter.statusCode, 404, 'the detail of the archived pack is 404 at once, not a 304');
  t.equal(detailAfter.json().error.code, 'pack_not_found');
  t.notOk(detailAfter.headers.etag, 'an error carries no ETag');

  // Publishing (a 404 detail must not stay cached), renaming and pool edits show at once too.
  await applyAction(app, gone.id, { action: 'restore' });
  const whileDraft = await detail(app, gone.id);
  t.equal(whileDraft.statusCode, 404);
  await applyAction(app, gone.id, { action: 'publish' });
  const republished = await detail(app, gone.id);
  t.equal(republished.statusCode, 200, 'a republished pack is served at once');
  t.same(listedIds(await list(app)).sort(), [kept.id, gone.id].sort());

  const renamed = await app.inject({
    method: 'PATCH',
    url: `/api/admin/packs/${kept.id}`,
    headers: bearer(ADMIN),
    payload: { name: 'Kept, renamed' },
  });
  t.equal(renamed.statusCode, 200);
  t.ok(
    (await list(app))
      .json()
      .packs.some((pack: { id: string; name: string }) => pack.id === kept.id && pack.name === 'Kept, renamed'),
    'a rename shows at once in the list',
  );
  t.equal((await detail(app, kept.id)).json().data.pack.name, 'Kept, renamed', 'and in the detail');

  const c = await createCollectible(app, { name: 'Cached card' });
  const draft = (await packInStatus(app, 'draft', { pack: { name: 'Fresh', cardsPerPack: 1 }, pool: [] })).pack;
  await applyAction(app, draft.id, { action: 'addCollectible', collectibleId: c.id, quantity: 3 });
  const beforePublish = await list(app);
  t.notOk(listedIds(beforePublish).includes(draft.id));
  await applyAction(app, draft.id, { action: 'publish' });
  const afterPublish = await list(app);
  t.ok(listedIds(afterPublish).includes(draft.id), 'a published pack is listed at once');
  t.equal(afterPublish.json().packs.find((pack: { id: string }) => pack.id === draft.id).available, 3);
});

/** Records every invalidation of the app's catalog cache (local changes and other instances' NOTIFY alike). */
function watchInvalidations(app: App): unknown[] {
  const heard: unknown[] = [];
  const invalidate = app.catalogCache.invalidate.bind(app.catalogCache);
  app.catalogCache.invalidate = (change) => {
    heard.push(change);
    invalidate(change);
  };
  return heard;
}

/** Polls `condition` every 25 ms for up to 10 s. */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
}

t.test('a change made through another instance drops this instance’s cache, by NOTIFY', async (t) => {
  const database = await createTestDatabase();
  // Runs after the subtest below has closed both apps.
  t.teardown(() => database.drop());

  await t.test('two instances on one database', async (t) => {
    const a = await buildTestApp(t, { DATABASE_URL: database.url });
    const b = await buildTestApp(t, { DATABASE_URL: database.url });
    const heardByA = watchInvalidations(a);
    const heardByB = watchInvalidations(b);
    const { pack } = await packInStatus(a, 'active', { pack: { name: 'Shared' } });
    // The setup's publish is announced too: let it reach B before B's cache is warmed.
    await waitUntil(() => heardByB.length > 0);
    heardByB.length = 0;

    const warm = await list(b);
    t.same(listedIds(warm), [pack.id], 'B lists the pack');
    t.equal((await detail(b, pack.id)).statusCode, 200);
    // A write behind the service's back announces nothing: B keeps answering from its cache.
    await a.db.orm.update(packs).set({ name: 'Changed behind the cache' }).where(eq(packs.id, pack.id));
    const cached = await list(b);
    t.equal(cached.json().packs[0].name, 'Shared', 'B serves its cached list');
    t.equal(cached.headers.etag, warm.headers.etag);

    // What drops B's cache must be A's NOTIFY naming the change, not the 5 s lifetime running out:
    // B's invalidations are watched (the wait is generous; the cause is what is checked).
    await applyAction(a, pack.id, { action: 'archive' });
    await waitUntil(() => heardByB.length > 0);
    t.same(heardByB, [{ lists: true, packIds: [pack.id] }], 'B heard exactly what the archive affects');
    t.same(listedIds(await list(b)), [], 'B stops listing the archived pack');
    t.equal((await detail(b, pack.id)).statusCode, 404, 'and its detail is 404');

    // The other way round: a publish through B reaches A's warm cache.
    t.same(listedIds(await list(a)), []);
    heardByA.length = 0;
    await applyAction(b, pack.id, { action: 'restore' });
    await applyAction(b, pack.id, { action: 'publish' });
    await waitUntil(() => heardByA.length > 0);
    t.same(
      heardByA,
      [{ lists: true, packIds: [pack.id] }],
      'A heard the publish (the restore of an archived pack affects nothing public)',
    );
    t.ok(listedIds(await list(a)).includes(pack.id), 'A lists the pack republished through B');
  });
});

t.test('a change drops only the responses it can affect: drafts are in none', async (t) => {
  const app = await buildTestApp(t);
  const {
    pack: active,
    collectibles: [inActive],
  } = await packInStatus(app, 'active', { pack: { name: 'Live' } });
  const {
    pack: draft,
    collectibles: [inDraft],
  } = await packInStatus(app, 'draft', { pack: { name: 'Work in progress' } });
  const warm = async () => {
    await list(app);
    await detail(app, active.id);
  };
  const cached = () => ({
    list: app.catalogCache.has(listKey({ limit: 100 })),
    detail: app.catalogCache.has(packKey(active.id)),
  });

  await warm();
  t.same(cached(), { list: true, detail: true }, 'warm');
  const extra = await createCollectible(app, { name: 'Extra' });
  await applyAction(app, draft.id, { action: 'addCollectible', collectibleId: extra.id, quantity: 3 });
  await applyAction(app, draft.id, { action: 'addCollectible', collectibleId: extra.id, weight: 2 });
  await applyAction(app, draft.id, { action: 'removeCollectible', collectibleId: extra.id });
  await app.inject({
    method: 'PATCH',
    url: `/api/admin/packs/${draft.id}`,
    headers: bearer(ADMIN),
    payload: { price: 7 },
  });
  await app.inject({
    method: 'PATCH',
    url: `/api/admin/collectibles/${inDraft?.id}`,
    headers: bearer(ADMIN),
    payload: { name: 'Only in a draft' },
  });
  t.same(
    cached(),
    { list: true, detail: true },
    'edits of a draft, and of a collectible only drafts hold, keep every cached response',
  );

  await app.inject({
    method: 'PATCH',
    url: `/api/admin/collectibles/${inActive?.id}`,
    headers: bearer(ADMIN),
    payload: { name: 'Renamed' },
  });
  t.same(
    cached(),
    { list: true, detail: false },
    "a collectible of an active pack drops that pack's detail, not the list",
  );
  t.equal((await detail(app, active.id)).json().data.odds[0].collectible.name, 'Renamed');

  await warm();
  await applyAction(app, draft.id, { action: 'publish' });
  t.same(cached(), { list: false, detail: true }, "publishing drops the lists and the pack's own detail only");
  t.ok(listedIds(await list(app)).includes(draft.id));

  await warm();
  await applyAction(app, active.id, { action: 'archive' });
  t.same(cached(), { list: false, detail: false }, 'archiving an active pack drops the lists and its detail');
  await warm();
  await applyAction(app, active.id, { action: 'restore' });
  t.equal(cached().list, true, 'restoring an archived pack (to a draft) keeps the lists');
});

t.test(
  'when the LISTEN connection comes back, the cache is dropped again: changes made meanwhile were not heard',
  async (t) => {
    const app = await buildTestApp(t, { LOG_LEVEL: 'silent' });
    await packInStatus(app, 'active');
    const key = listKey({ limit: 100 });
    const heard = watchInvalidations(app);
    const listener = async () =>
      (
        (await app.db.orm.execute(
          // The catalog's listener: the last statement of a LISTEN connection names its channel.
          sql`select pid from pg_stat_activity where datname = current_database() and application_name = 'pack-service-listen' and query = 'listen "pack_catalog"'`,
        )) as unknown as { rows: { pid: number }[] }
      ).rows[0]?.pid;
    const before = await listener();
    t.ok(before, 'a LISTEN connection is open');
    await app.db.orm.execute(sql`select pg_terminate_backend(${before})`);
    await waitUntil(() => heard.includes('all'));
    t.same(heard, ['all'], 'losing the connection drops everything');
    // While it is away (it retries after 500 ms), requests fill the cache again.
    await list(app);
    t.ok(app.catalogCache.has(key), 'cached while the listener reconnects');
    await waitUntil(() => heard.length > 1);
    t.same(heard, ['all', 'all'], 'listening again drops everything again');
    t.notOk(app.catalogCache.has(key), 'so nothing cached while nobody listened survives');
    const after = await listener();
    t.ok(after && after !== before, 'a new LISTEN connection');
  },
);

t.test(
  'a URL answered from the cache before validation is still rate limited and still carries every header',
  async (t) => {
    // Anonymous callers are limited per IP; the admin's setup requests count for the admin.
    const app = await buildTestApp(t, { RATE_LIMIT_MAX: '12' });
    await packInStatus(app, 'active');
    const responses = [];
    for (let i = 0; i < 13; i++)
      responses.push(await app.inject({ url: '/api/packs?limit=5', headers: { 'x-request-id': `fast-${i}` } }));
    t.same(
      responses.map((res) => res.statusCode),
      [...Array(12).fill(200), 429],
      'the thirteenth is refused by the rate limit',
    );
    t.same(
      responses.map((res) => res.headers['x-ratelimit-remaining']),
      ['11', '10', '9', '8', '7', '6', '5', '4', '3', '2', '1', '0', '0'],
    );
    for (const [i, res] of responses.slice(0, 12).entries()) {
      t.equal(res.headers['x-request-id'], `fast-${i}`);
      t.equal(res.headers['x-content-type-options'], 'nosniff', 'security headers');
      t.match(res.headers['content-security-policy'], /default-src 'self'/);
      t.ok(res.headers.etag);
    }
    t.equal(responses[1]?.body, responses[0]?.body, 'the same answer from the cache');
    const head = await app.inject({ method: 'HEAD', url: '/api/packs?limit=5', remoteAddress: '10.0.0.2' });
    t.equal(head.statusCode, 200, 'HEAD too');
    t.equal(head.body, '');
  },
);
