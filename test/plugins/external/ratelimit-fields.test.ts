import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import t from 'tap';
import { limitItem, policyItem } from '../../../plugins/external/rate-limit.js';
import { bearer, buildTestApp, tokenFor } from '../../support/app.js';
import { packInStatus } from '../../support/catalog.js';
import { signIn, startPurchase } from '../../support/economy.js';
import { expectLimited, getUser, LIMITED, REDIS_PREFIX, REDIS_URL } from '../../support/rate-limit.js';

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` names each
 * limit with its quota and window, `RateLimit` what is left of it and when it starts over; beside
 * the X-RateLimit-* headers and, on a 429, Retry-After.
 */

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** The `"default"` items of a response, parsed: [q, w] and [r, t]. */
function defaultFields(t: Test, res: LightMyRequestResponse) {
  const policy = String(res.headers['ratelimit-policy']);
  const limit = String(res.headers.ratelimit);
  const policyMatch = /^"default";q=(\d+);w=(\d+)(, |$)/.exec(policy);
  const limitMatch = /^"default";r=(\d+);t=(\d+)(, |$)/.exec(limit);
  t.ok(policyMatch, `RateLimit-Policy is a structured-field list (${policy})`);
  t.ok(limitMatch, `RateLimit is a structured-field list (${limit})`);
  return {
    quota: Number(policyMatch?.[1]),
    window: Number(policyMatch?.[2]),
    remaining: Number(limitMatch?.[1]),
    reset: Number(limitMatch?.[2]),
  };
}

t.test('the items are structured-field list members', async (t) => {
  t.equal(policyItem('default', 300, 60_000), '"default";q=300;w=60');
  t.equal(policyItem('burst', 5, 500), '"burst";q=5;w=1', 'a window under a second is told as 1 s');
  t.equal(policyItem('slow', 5, 90_500), '"slow";q=5;w=91', 'rounded up');
  t.equal(limitItem('default', 12, 30), '"default";r=12;t=30');
});

t.test('every counted response carries both fields, agreeing with X-RateLimit-*', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const alice = bearer(tokenFor(`fields-${randomUUID()}`));
  for (const left of [2, 1, 0]) {
    const res = await getUser(app, alice);
    t.equal(res.statusCode, 200);
    const fields = defaultFields(t, res);
    t.same([fields.quota, fields.window, fields.remaining], [3, 60, left]);
    t.equal(String(fields.remaining), res.headers['x-ratelimit-remaining'], 'the same count as X-RateLimit-Remaining');
    t.equal(String(fields.reset), res.headers['x-ratelimit-reset']);
    t.ok(fields.reset >= 59 && fields.reset <= 60, `t: the rest of the window (${fields.reset})`);
  }
  const limited = await getUser(app, alice);
  expectLimited(t, limited);
  const fields = defaultFields(t, limited);
  t.same([fields.quota, fields.window, fields.remaining], [3, 60, 0], 'nothing left');
  t.equal(String(fields.reset), limited.headers['retry-after'], 't agrees with Retry-After');
});

t.test('anonymous catalog reads (their own fast path), unknown routes and 429s of it carry them too', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const catalog = await app.inject({ method: 'GET', url: '/api/packs' });
  t.equal(catalog.statusCode, 200);
  t.same(defaultFields(t, catalog).remaining, 2);
  const unknown = await app.inject({ method: 'GET', url: '/api/nowhere' });
  t.equal(unknown.statusCode, 404);
  t.same(defaultFields(t, unknown).remaining, 1);
  await app.inject({ method: 'GET', url: '/api/packs' });
  const limited = await app.inject({ method: 'GET', url: '/api/packs' });
  expectLimited(t, limited);
  t.equal(defaultFields(t, limited).remaining, 0);
});

t.test('responses the limit does not count carry neither', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const health = await app.inject({ method: 'GET', url: '/api/health' });
  t.equal(health.statusCode, 200);
  t.equal(health.headers['ratelimit-policy'], undefined);
  t.equal(health.headers.ratelimit, undefined);
});

t.test("a route's stricter limit lists its own policy after the global one on its 429", async (t) => {
  const app = await buildTestApp(t, { AUTH_RATE_LIMIT_IP: '1' });
  const attempt = () =>
    app.inject({
      method: 'POST',
      url: '/api/auth/token',
      payload: { grant_type: 'refresh_token', refresh_token: 'D'.repeat(43) },
    });
  const first = await attempt();
  t.not(first.statusCode, 429);
  t.match(String(first.headers['ratelimit-policy']), /^"default";q=10000;w=60$/, 'allowed: the global policy');
  const limited = await attempt();
  t.equal(limited.statusCode, 429);
  t.equal(limited.json().error.code, 'rate_limited');
  const retryAfter = limited.headers['retry-after'];
  // The address limit runs before the global one on these routes (before the body is read): the
  // global policy is listed first when it counted the request too.
  t.match(String(limited.headers['ratelimit-policy']), /^("default";q=10000;w=60, )?"auth-ip";q=1;w=60$/);
  t.match(String(limited.headers.ratelimit), new RegExp(`^("default";r=\\d+;t=\\d+, )?"auth-ip";r=0;t=${retryAfter}$`));
});

t.test('the purchase limit, counted after the global one, lists both policies on its 429', async (t) => {
  const app = await buildTestApp(t, { PURCHASE_RATE_LIMIT: '1' });
  const { pack } = await packInStatus(app, 'active');
  const fan = await signIn(app, `fields-buyer-${randomUUID()}`);
  const first = await startPurchase(app, fan, pack.id);
  t.equal(first.statusCode, 201, first.body);
  const limited = await startPurchase(app, fan, pack.id);
  t.equal(limited.statusCode, 429);
  t.equal(limited.headers['ratelimit-policy'], '"default";q=10000;w=60, "purchase-start";q=1;w=60');
  const retryAfter = limited.headers['retry-after'];
  t.match(
    String(limited.headers.ratelimit),
    new RegExp(`^"default";r=\\d+;t=\\d+, "purchase-start";r=0;t=${retryAfter}$`),
  );
});

t.test('Redis: the fields count across instances', async (t) => {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const subject = `rl-fields-${randomUUID()}`;
  t.teardown(async () => {
    await redis.del(`${REDIS_PREFIX}user:${subject}`);
    await redis.quit();
  });
  const first = await buildTestApp(t, { ...LIMITED, REDIS_URL });
  const second = await buildTestApp(t, { ...LIMITED, REDIS_URL });
  const shared = bearer(tokenFor(subject));
  const left: number[] = [];
  for (const app of [first, second, first]) {
    const res = await getUser(app, shared);
    t.equal(res.statusCode, 200);
    left.push(defaultFields(t, res).remaining);
  }
  t.same(left, [2, 1, 0], 'one count across both instances');
  const limited = await getUser(second, shared);
  expectLimited(t, limited);
  const fields = defaultFields(t, limited);
  t.same([fields.quota, fields.window, fields.remaining], [3, 60, 0]);
  t.equal(String(fields.reset), limited.headers['retry-after']);
});
