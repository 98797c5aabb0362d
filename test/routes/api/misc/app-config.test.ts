import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { App } from '../../../../app.js';
import { bearer, buildTestApp, createTestDatabase, tokenFor } from '../../../support/app.js';
import { ADMIN } from '../../../support/catalog.js';
import { startTcpProxyTo } from '../../../support/tcp-proxy.js';

/**
 * GET /api/app-config (anyone) and PUT /api/admin/app-config (platform admins): stored in
 * PostgreSQL, answered from memory on every instance, also while the database is away.
 */

const SETTINGS = {
  minimumVersions: { ios: '2.4.0', android: '2.3' },
  featureFlags: { leagues: true, 'trading.beta': false },
  supportLinks: { help: 'https://support.example.com/app', contact: 'mailto:help@example.com' },
};

const read = (app: App, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url: '/api/app-config', headers });
const put = (app: App, payload: unknown, token = ADMIN) =>
  app.inject({ method: 'PUT', url: '/api/admin/app-config', headers: bearer(token), payload: payload as object });

/** Polls until `check` holds, for up to `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(100);
  }
  return check();
}

t.test('before any edit: the default, with ETag, Cache-Control and 304', async (t) => {
  const app = await buildTestApp(t);
  const res = await read(app);
  t.equal(res.statusCode, 200);
  t.same(res.json(), {
    success: true,
    data: {
      minimumVersions: { ios: '0', android: '0' },
      featureFlags: {},
      supportLinks: {},
      version: 0,
      updatedAt: null,
    },
  });
  t.match(res.headers['content-type'], /^application\/json/);
  t.match(res.headers['cache-control'], /^public, max-age=\d+$/);
  const etag = res.headers.etag as string;
  t.match(etag, /^"[A-Za-z0-9_-]+"$/);
  const again = await read(app, { 'if-none-match': etag });
  t.equal(again.statusCode, 304);
  t.equal(again.body, '');
  t.equal(again.headers.etag, etag);
  t.equal((await read(app, { 'if-none-match': `W/${etag}, "other"` })).statusCode, 304, 'a weak or listed match too');
  t.equal((await read(app, { 'if-none-match': '"other"' })).statusCode, 200);
});

t.test('an admin edit is served at once, audited, and changes the ETag', async (t) => {
  const app = await buildTestApp(t);
  const before = await read(app);
  const res = await put(app, { ...SETTINGS, version: 0 });
  t.equal(res.statusCode, 200, res.body);
  const saved = res.json().data;
  t.same({ ...saved, updatedAt: undefined }, { ...SETTINGS, version: 1, updatedAt: undefined });
  t.match(saved.updatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const after = await read(app);
  t.same(after.json().data, saved, 'GET answers the edit');
  t.not(after.headers.etag, before.headers.etag);
  t.equal(
    (await read(app, { 'if-none-match': before.headers.etag as string })).statusCode,
    200,
    'the old ETag no longer matches',
  );

  const audit = await app.inject({
    method: 'GET',
    url: '/api/admin/audit-log',
    headers: bearer(ADMIN),
    query: { targetId: 'app' },
  });
  t.equal(audit.statusCode, 200);
  const [entry] = audit.json().data;
  t.match(entry, {
    actorId: 'root',
    action: 'app_config.update',
    targetType: 'app_config',
    targetId: 'app',
    teamId: null,
    before: { minimumVersions: { ios: '0', android: '0' }, featureFlags: {}, supportLinks: {} },
    after: SETTINGS,
  });

  // A second edit from the version just read; then one from the old version is refused.
  const second = await put(app, { ...SETTINGS, featureFlags: { leagues: false }, version: 1 });
  t.equal(second.statusCode, 200);
  t.equal(second.json().data.version, 2);
  const stale = await put(app, { ...SETTINGS, featureFlags: { lost: true }, version: 1 });
  t.equal(stale.statusCode, 409);
  t.equal(stale.json().error.code, 'app_config_changed');
  t.same((await read(app)).json().data.featureFlags, { leagues: false }, 'the refused edit changed nothing');
  const ahead = await put(app, { ...SETTINGS, version: 7 });
  t.equal(ahead.statusCode, 409, 'a version never served is refused too');
});

t.test('two first edits at once: one is saved, the other refused', async (t) => {
  const app = await buildTestApp(t);
  const results = await Promise.all([
    put(app, { ...SETTINGS, featureFlags: { a: true }, version: 0 }),
    put(app, { ...SETTINGS, featureFlags: { b: true }, version: 0 }),
  ]);
  t.same(results.map((res) => res.statusCode).sort(), [200, 409]);
  const winner = results.find((res) => res.statusCode === 200)?.json().data;
  t.same((await read(app)).json().data, winner);
});

t.test('who may edit: 401 without a token, 403 for a fan', async (t) => {
  const app = await buildTestApp(t);
  const anonymous = await app.inject({
    method: 'PUT',
    url: '/api/admin/app-config',
    payload: { ...SETTINGS, version: 0 },
  });
  t.equal(anonymous.statusCode, 401);
  t.equal(anonymous.json().error.code, 'missing_credentials');
  const fan = await put(app, { ...SETTINGS, version: 0 }, tokenFor('fan'));
  t.equal(fan.statusCode, 403);
  t.equal(fan.json().error.code, 'forbidden');
  t.equal((await read(app)).json().data.version, 0, 'nothing saved');
});

t.test('bad bodies are 400 validation_failed, and save nothing', async (t) => {
  const app = await buildTestApp(t);
  const valid = { ...SETTINGS, version: 0 };
  const cases: [string, unknown][] = [
    ['no body', undefined],
    ['no version', SETTINGS],
    ['an unknown field', { ...valid, extra: 1 }],
    ['version as text', { ...valid, version: '0' }],
    ['a negative version', { ...valid, version: -1 }],
    ['a missing platform', { ...valid, minimumVersions: { ios: '1.0' } }],
    ['an unknown platform', { ...valid, minimumVersions: { ...SETTINGS.minimumVersions, windows: '1' } }],
    ['a version that is not one', { ...valid, minimumVersions: { ios: 'latest', android: '1' } }],
    ['a version with a leading zero', { ...valid, minimumVersions: { ios: '01.2', android: '1' } }],
    ['a flag that is text', { ...valid, featureFlags: { leagues: 'true' } }],
    ['a flag name with a space', { ...valid, featureFlags: { 'two words': true } }],
    ['a flag name starting with a digit', { ...valid, featureFlags: { '1st': true } }],
    [
      'too many flags',
      { ...valid, featureFlags: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, true])) },
    ],
    ['a plain http link', { ...valid, supportLinks: { help: 'http://support.example.com' } }],
    ['a javascript: link', { ...valid, supportLinks: { help: 'javascript:alert(1)' } }],
    ['a link that is not a URL', { ...valid, supportLinks: { help: 'https://exa mple.com' } }],
    ['flags as a list', { ...valid, featureFlags: ['leagues'] }],
  ];
  for (const [what, payload] of cases) {
    const res = await app.inject({
      method: 'PUT',
      url: '/api/admin/app-config',
      headers: { ...bearer(ADMIN), 'content-type': 'application/json' },
      payload: payload === undefined ? '' : JSON.stringify(payload),
    });
    t.equal(res.statusCode, 400, `${what}: ${res.statusCode}`);
    t.match(res.json().error.code, /^(validation_failed|invalid_json)$/, what);
  }
  t.equal((await read(app)).json().data.version, 0, 'nothing saved');
});

t.test('a second instance on the same database serves an edit made on the first', async (t) => {
  const database = await createTestDatabase();
  // Teardowns run last-registered first: the database is dropped after both apps closed.
  t.teardown(() => database.drop());
  const first = await buildTestApp(t, { DATABASE_URL: database.url });
  const second = await buildTestApp(t, { DATABASE_URL: database.url });
  t.equal((await read(second)).json().data.version, 0);
  const saved = (await put(first, { ...SETTINGS, version: 0 })).json().data;
  t.ok(
    await eventually(async () => (await read(second)).json().data.version === 1),
    'the second instance heard of the edit',
  );
  t.same((await read(second)).json().data, saved);
  t.equal((await read(second)).headers.etag, (await read(first)).headers.etag, 'the same ETag on both');

  // And back: an edit on the second, from the version it serves, reaches the first.
  t.equal((await put(second, { ...SETTINGS, featureFlags: {}, version: 1 })).statusCode, 200);
  t.ok(await eventually(async () => (await read(first)).json().data.version === 2));
});

t.test(
  'while the database is away: the last configuration read is still served; an edit made meanwhile arrives after',
  async (t) => {
    const database = await createTestDatabase();
    t.teardown(() => database.drop());
    const proxy = await startTcpProxyTo(database.url);
    t.teardown(() => proxy.close());
    // `cut` reaches PostgreSQL through the proxy; `other` directly, to edit while `cut` cannot.
    const cut = await buildTestApp(t, {
      DATABASE_URL: proxy.urlFor(database.url),
      DATABASE_WATCH_INTERVAL: '500 ms',
      DATABASE_WATCH_TIMEOUT: '1 second',
    });
    const other = await buildTestApp(t, { DATABASE_URL: database.url });
    const saved = (await put(cut, { ...SETTINGS, version: 0 })).json().data;
    const etag = (await read(cut)).headers.etag as string;

    proxy.refuse();
    // The database is unreachable for `cut`: its writes fail, its readiness says so ...
    const refused = await put(cut, { ...SETTINGS, version: 1 });
    t.equal(refused.statusCode, 503, `an edit cannot be saved (${refused.statusCode})`);
    t.ok(await eventually(async () => (await cut.inject({ url: '/api/health/ready' })).statusCode === 503, 5000));
    // ... and the app configuration is answered all the same, from memory.
    for (let attempt = 0; attempt < 5; attempt++) {
      const res = await read(cut);
      t.equal(res.statusCode, 200);
      t.same(res.json().data, saved);
      t.equal(res.headers.etag, etag);
      t.equal((await read(cut, { 'if-none-match': etag })).statusCode, 304);
    }
    // Another instance edits meanwhile; `cut` keeps the last value it read until it can read again.
    const edited = await put(other, { ...SETTINGS, featureFlags: { leagues: false }, version: 1 });
    t.equal(edited.statusCode, 200);
    await sleep(500);
    t.same((await read(cut)).json().data, saved, 'still the last known value');

    proxy.restore();
    t.ok(
      await eventually(async () => (await read(cut)).json().data.version === 2, 15_000),
      'the edit made during the outage is served once the database is back',
    );
  },
);
