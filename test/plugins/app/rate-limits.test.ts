import t from 'tap';
import { bearer, buildTestApp, tokenFor } from '../../support/app.js';
import { type ErrorBody, expectLimited, forgedToken, getUser, LIMITED } from '../../support/rate-limit.js';

/**
 * Whose bucket a request counts in (plugins/app/rate-limits.ts): the verified user, else the IP;
 * a forged or malformed token never buys its sender a fresh bucket, and no user is provisioned
 * for a request over the limit.
 */

t.test('per user: each valid token has its own budget from the same IP', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const alice = bearer(tokenFor('alice'));
  const bob = bearer(tokenFor('bob'));
  for (let i = 0; i < 3; i++) {
    t.equal((await getUser(app, alice)).statusCode, 200, `alice #${i + 1}`);
    t.equal((await getUser(app, bob)).statusCode, 200, `bob #${i + 1}`);
  }
  expectLimited(t, await getUser(app, alice));
  expectLimited(t, await getUser(app, bob));
  // A third user from the same address is unaffected, and so is the address's own bucket.
  t.equal((await getUser(app, bearer(tokenFor('carol')))).statusCode, 200, 'carol has her own budget');
  t.equal((await app.inject({ method: 'GET', url: '/docs/json' })).statusCode, 200, 'the IP bucket is untouched');
});

t.test('forged tokens count against the IP bucket (on a public rate-limited route)', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const docs = (headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: '/docs/json', headers });
  const first = await docs();
  t.equal(first.statusCode, 200);
  t.equal(first.headers['x-ratelimit-remaining'], '2');
  const second = await docs(bearer(forgedToken()));
  t.equal(second.statusCode, 200);
  t.equal(second.headers['x-ratelimit-remaining'], '1', 'a forged token shares the anonymous IP bucket');
  const third = await docs({ authorization: 'Bearer not-even-a-jwt' });
  t.equal(third.statusCode, 200);
  t.equal(third.headers['x-ratelimit-remaining'], '0');
  const fourth = await docs(bearer(forgedToken()));
  t.equal(fourth.statusCode, 429, 'a fresh forgery does not buy a fresh bucket');
  t.equal(fourth.headers['retry-after'], '60');
  // A verified user is counted on their own, not in the exhausted IP bucket.
  t.equal((await getUser(app, bearer(tokenFor('dave')))).statusCode, 200);
});

t.test('forged tokens on an authenticated route cannot escape the IP limit', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const seen: Array<[number, string | undefined, string | undefined]> = [];
  for (let i = 0; i < 4; i++) {
    const res = await getUser(app, bearer(forgedToken()));
    seen.push([
      res.statusCode,
      (res.json() as ErrorBody).error.code,
      res.headers['x-ratelimit-remaining'] as string | undefined,
    ]);
  }
  t.same(
    seen,
    [
      [401, 'invalid_token', '2'],
      [401, 'invalid_token', '1'],
      [401, 'invalid_token', '0'],
      [429, 'rate_limited', '0'],
    ],
    'each forgery is counted before it is refused',
  );
  // The IP bucket is spent: no token, a malformed one and a fresh forgery are all 429, not 401.
  expectLimited(t, await getUser(app));
  expectLimited(t, await getUser(app, { authorization: 'Bearer not-even-a-jwt' }));
  const forged = await getUser(app, bearer(forgedToken()));
  expectLimited(t, forged);
  t.equal(forged.headers['www-authenticate'], undefined, 'no 401 challenge on a limited request');
  // The admin guard runs after the limit as well.
  expectLimited(t, await app.inject({ method: 'GET', url: '/api/admin/users/x', headers: bearer(forgedToken()) }));
  // A valid token still has its own budget.
  t.equal((await getUser(app, bearer(tokenFor('grace')))).statusCode, 200);
});

t.test('no user is provisioned for a request over the limit', async (t) => {
  const app = await buildTestApp(t, LIMITED);
  const newcomer = bearer(tokenFor('newcomer'));
  // Spend the newcomer's budget on a public route: a valid token is counted per user, unprovisioned.
  for (let i = 0; i < 3; i++)
    t.equal((await app.inject({ method: 'GET', url: '/docs/json', headers: newcomer })).statusCode, 200);
  expectLimited(t, await getUser(app, newcomer));
  expectLimited(
    t,
    await app.inject({ method: 'PATCH', url: '/api/user', headers: newcomer, payload: { displayName: 'N' } }),
  );
  // An admin (own budget) finds no such user: the guard never ran for the limited requests.
  const admin = bearer(tokenFor('rl-admin', { role: 'admin' }));
  const lookup = await app.inject({ method: 'GET', url: '/api/admin/users/newcomer', headers: admin });
  t.equal(lookup.statusCode, 404);
  t.equal((lookup.json() as ErrorBody).error.code, 'user_not_found');
});
