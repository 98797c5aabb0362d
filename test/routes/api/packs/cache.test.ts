import { eq } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { packs } from '../../../../db/schema.js';
import { bearer, buildTestApp, createTestDatabase, usingPostgres } from '../../../support/app.js';
import { ADMIN, applyAction, createCollectible, packInStatus } from '../../../support/catalog.js';

/**
 * The public catalog's HTTP caching (ETag, Cache-Control, 304) and its in-memory cache, which
 * every change must invalidate at once on this instance and, through NOTIFY, on the others.
 */

const list = (app: App, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: '/api/packs', headers });
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

  const renamed = await app.inject({ method: 'PATCH', url: `/api/admin/packs/${kept.id}`, headers: bearer(ADMIN), payload: { name: 'Kept, renamed' } });
  t.equal(renamed.statusCode, 200);
  t.ok(
    (await list(app)).json().packs.some((pack: { id: string; name: string }) => pack.id === kept.id && pack.name === 'Kept, renamed'),
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

const twoInstances = usingPostgres
  ? {}
  : { skip: 'needs PostgreSQL (npm run test:pg): PGlite serves one process, so two instances cannot share it' };

t.test('a change made through another instance drops this instance’s cache within 2 s', twoInstances, async (t) => {
  const database = await createTestDatabase();
  // Runs after the subtest below has closed both apps.
  t.teardown(() => database.drop());

  await t.test('two instances on one database', async (t) => {
    const a = await buildTestApp(t, { DATABASE_URL: database.url });
    const b = await buildTestApp(t, { DATABASE_URL: database.url });
    const { pack } = await packInStatus(a, 'active', { pack: { name: 'Shared' } });
    // Let the notifications of the setup reach B before its cache is warmed.
    await new Promise((resolve) => setTimeout(resolve, 300));

    const warm = await list(b);
    t.same(listedIds(warm), [pack.id], 'B lists the pack');
    t.equal((await detail(b, pack.id)).statusCode, 200);
    // A write behind the service's back announces nothing: B keeps answering from its cache.
    await a.db.orm.update(packs).set({ name: 'Changed behind the cache' }).where(eq(packs.id, pack.id));
    const cached = await list(b);
    t.equal(cached.json().packs[0].name, 'Shared', 'B serves its cached list');
    t.equal(cached.headers.etag, warm.headers.etag);

    await applyAction(a, pack.id, { action: 'archive' });
    const started = Date.now();
    let elapsed = 0;
    let ids = listedIds(await list(b));
    while (ids.includes(pack.id) && elapsed < 2000) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      ids = listedIds(await list(b));
      elapsed = Date.now() - started;
    }
    t.same(ids, [], `B stops listing the archived pack (after ${elapsed} ms)`);
    t.ok(elapsed < 2000, `well before the 5 s TTL (${elapsed} ms)`);
    t.equal((await detail(b, pack.id)).statusCode, 404, 'and its detail is 404');

    // The other way round: a publish through B reaches A's warm cache.
    t.same(listedIds(await list(a)), []);
    await applyAction(b, pack.id, { action: 'restore' });
    await applyAction(b, pack.id, { action: 'publish' });
    const back = Date.now();
    let seenOnA = false;
    while (!seenOnA && Date.now() - back < 2000) {
      seenOnA = listedIds(await list(a)).includes(pack.id);
      if (!seenOnA) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    t.ok(seenOnA, `A lists the pack republished through B (after ${Date.now() - back} ms)`);
  });
});
