import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import t from 'tap';
import { describeWindow } from '../../../plugins/external/rate-limit.js';
import { bearer, buildTestApp, tokenFor } from '../../support/app.js';
import {
  type ErrorBody,
  expectLimited,
  forgedToken,
  getUser,
  LIMITED,
  REDIS_PREFIX,
  REDIS_URL,
} from '../../support/rate-limit.js';

/**
 * The global rate limit: RATE_LIMIT_MAX requests
 * per RATE_LIMIT_WINDOW per caller, the caller being the verified user or else the IP; 429 in the
 * error envelope with Retry-After; probes exempt; shared through Redis when REDIS_URL is set.
 */

t.test('the 4th request in a window is 429 rate_limited, in the envelope, with Retry-After', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const alice = bearer(tokenFor('alice'));
  for (const remaining of ['2', '1', '0']) {
    const res = await getUser(app, alice);
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-ratelimit-limit'], '3');
    t.equal(res.headers['x-ratelimit-remaining'], remaining);
    t.equal(res.headers['retry-after'], undefined, 'no retry-after while allowed');
  }
  const limited = await getUser(app, { ...alice, 'x-request-id': 'limited-1' });
  expectLimited(t, limited);
  t.equal((limited.json() as ErrorBody).error.requestId, 'limited-1');

  // The limit is per caller across routes, not per route.
  const patch = await app.inject({ method: 'PATCH', url: '/api/user', headers: alice, payload: { displayName: 'A' } });
  expectLimited(t, patch);
});

t.test('catalog reads are counted in the same bucket as every other request of their caller', async (t) => {
  // Anonymous catalog reads are counted by a synchronous check of their own (the plugin's hook
  // costs a cached read a fifth of its time), in the plugin's store: one budget per caller.
  const app = await buildTestApp(t, LIMITED);
  const catalog = (headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: '/api/packs', headers });
  const first = await catalog();
  t.equal(first.statusCode, 200);
  t.same([first.headers['x-ratelimit-limit'], first.headers['x-ratelimit-remaining']], ['3', '2']);
  t.ok(Number(first.headers['x-ratelimit-reset']) >= 59, 'reset: the rest of the window, in seconds');
  const docs = await app.inject({ method: 'GET', url: '/docs/json' });
  t.equal(docs.headers['x-ratelimit-remaining'], '1', 'a route the plugin counts takes from the same bucket');
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/products' })).headers['x-ratelimit-remaining'],
    '0',
    'another catalog route too',
  );
  const limited = await catalog({ 'x-request-id': 'catalog-1' });
  expectLimited(t, limited);
  t.equal((limited.json() as ErrorBody).error.requestId, 'catalog-1');
  expectLimited(t, await app.inject({ method: 'GET', url: '/docs/json' }));

  // With a token the caller is the user, counted by the plugin: a fresh budget, and forgeries stay in the IP's.
  const alice = await catalog(bearer(tokenFor('alice')));
  t.same([alice.statusCode, alice.headers['x-ratelimit-remaining']], [200, '2']);
  expectLimited(t, await catalog(bearer(forgedToken())));
});

t.test('a 429 on the docs routes is in the error envelope too', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ method: 'GET', url: '/docs/json' })).statusCode, 200);
  const json = await app.inject({ method: 'GET', url: '/docs/json', headers: { 'x-request-id': 'docs-1' } });
  expectLimited(t, json);
  t.equal((json.json() as ErrorBody).error.requestId, 'docs-1');
  // The Swagger UI page and its static files too, not only the JSON document.
  for (const url of ['/docs', '/docs/static/index.html']) expectLimited(t, await app.inject({ method: 'GET', url }));
});

t.test("unknown routes count against the caller's limit", async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const seen: Array<[number, string | undefined]> = [];
  for (let i = 0; i < 4; i++) {
    const res = await app.inject({ method: 'GET', url: `/api/scan-${i}` });
    seen.push([res.statusCode, (res.json() as ErrorBody).error.code]);
  }
  t.same(seen, [
    [404, 'route_not_found'],
    [404, 'route_not_found'],
    [404, 'route_not_found'],
    [429, 'rate_limited'],
  ]);
  const limited = await app.inject({ method: 'GET', url: '/wp-login.php', headers: { 'x-request-id': 'scan-1' } });
  expectLimited(t, limited);
  t.equal((limited.json() as ErrorBody).error.requestId, 'scan-1');
  // It is the same bucket as the known routes' (per IP here), not one of its own.
  expectLimited(t, await app.inject({ method: 'GET', url: '/docs/json' }));

  // And the other way round: a user who spent the budget on real routes gets 429 on unknown ones.
  const heidi = bearer(tokenFor('heidi'));
  for (let i = 0; i < 3; i++) t.equal((await getUser(app, heidi)).statusCode, 200);
  expectLimited(t, await app.inject({ method: 'GET', url: '/api/nope', headers: heidi }));
});

t.test('unknown routes are limited before their body or query is even looked at', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/nope',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    statuses.push(res.statusCode);
  }
  t.same(statuses, [404, 404, 404, 429], 'malformed bodies to unknown routes are counted, and answered 404 unread');
  expectLimited(t, await app.inject({ method: 'GET', url: '/api/nope?q=%00' }));
});

t.test('health probes are not rate limited', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  for (let i = 0; i < 8; i++) {
    for (const url of ['/api/health', '/api/health/ready']) {
      const res = await app.inject({ method: 'GET', url });
      t.equal(res.statusCode, 200, `${url} #${i + 1}`);
      t.equal(res.headers['x-ratelimit-limit'], undefined, `${url} carries no rate-limit headers`);
    }
  }
  // The probes did not spend the anonymous budget either.
  t.equal((await app.inject({ method: 'GET', url: '/docs/json' })).headers['x-ratelimit-remaining'], '2');
});

t.test('Redis: two instances share one budget per user', async (t) => {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const subjects = [`rl-shared-${randomUUID()}`, `rl-other-${randomUUID()}`];
  t.teardown(async () => {
    await redis.del(...subjects.map((sub) => `${REDIS_PREFIX}user:${sub}`));
    await redis.quit();
  });

  const first = await buildTestApp(t, { ...LIMITED, REDIS_URL });
  const second = await buildTestApp(t, { ...LIMITED, REDIS_URL });
  const shared = bearer(tokenFor(subjects[0] as string));

  const seen: Array<[number, string | undefined]> = [];
  for (const app of [first, second, first]) {
    const res = await getUser(app, shared);
    seen.push([res.statusCode, res.headers['x-ratelimit-remaining'] as string | undefined]);
  }
  t.same(
    seen,
    [
      [200, '2'],
      [200, '1'],
      [200, '0'],
    ],
    'one count across both instances',
  );
  expectLimited(t, await getUser(second, shared));
  expectLimited(t, await getUser(first, shared));

  // The count lives in Redis under the documented prefix, expiring with the window.
  const key = `${REDIS_PREFIX}user:${subjects[0]}`;
  t.equal(await redis.get(key), '5');
  const ttl = await redis.pttl(key);
  t.ok(ttl > 0 && ttl <= 60_000, `the key expires with the window (${ttl} ms)`);

  // Another user on the same instances has a budget of their own.
  const other = await getUser(second, bearer(tokenFor(subjects[1] as string)));
  t.equal(other.statusCode, 200);
  t.equal(other.headers['x-ratelimit-remaining'], '2');
});

t.test('Redis unreachable: the app still answers (skipOnError)', async (t) => {
  const started = Date.now();
  const app = await buildTestApp(t, { ...LIMITED, REDIS_URL: 'redis://127.0.0.1:6390' });
  // The failure this guards against is a start that waits for the store forever.
  t.ok(Date.now() - started < 30_000, 'the app starts without its store');

  const healthStarted = Date.now();
  const health = await app.inject({ method: 'GET', url: '/api/health' });
  t.equal(health.statusCode, 200);
  t.ok(Date.now() - healthStarted < 10_000, 'GET /api/health answers, not held up by the store');

  // A rate-limited route: the store fails, the request goes through instead of failing.
  const res = await getUser(app, bearer(tokenFor('eve')));
  t.equal(res.statusCode, 200, 'not a 500 when the store is down');
  t.equal(res.json().data.id, 'eve');
});

t.test('Redis unreachable: rate-limited requests are not held up by the store', async (t) => {
  const app = await buildTestApp(t, { ...LIMITED, REDIS_URL: 'redis://127.0.0.1:6390' });
  const token = bearer(tokenFor('frank'));
  // More than RATE_LIMIT_MAX: with the store down nothing is counted, so none is limited either.
  // A command queued for the store would wait for it forever: each request gets 10 s to answer.
  for (let i = 0; i < 5; i++) {
    const res = await Promise.race([
      getUser(app, token),
      sleep(10_000, undefined, { ref: false }).then(() => undefined),
    ]);
    t.equal(res?.statusCode, 200, `request #${i + 1} answered 200, not held up`);
    if (!res) break;
  }
  // Unknown routes (limited through app.rateLimit()) are not held up either.
  const missing = await Promise.race([
    app.inject({ method: 'GET', url: '/api/nope' }),
    sleep(10_000, undefined, { ref: false }).then(() => undefined),
  ]);
  t.equal(missing?.statusCode, 404, 'a 404, not held up');
});

t.test('the window is told as a person says it', async (t) => {
  t.equal(describeWindow(60_000), '1 minute');
  t.equal(describeWindow(120_000), '2 minutes');
  t.equal(describeWindow(3_600_000), '1 hour');
  t.equal(describeWindow(90_000), '90 seconds');
  t.equal(describeWindow(1500), '1500 ms');
});
