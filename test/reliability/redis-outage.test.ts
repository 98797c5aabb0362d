import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import type { App } from '../../app.js';
import { bearer, buildTestApp, createTestDatabase } from '../support/app.js';
import { type SignedIn, signInWith, startProviders, whoAmI } from '../support/sessions.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

/**
 * Redis goes away (a network cut, then a server refusing) under two instances that share it for
 * the rate limit and the revocation bus. Documented degraded behaviour: requests keep being served
 * within a bound, without the shared rate limit; a logout still works on the instance that made
 * it, and the other instance refuses the token once Redis is back (or at its next resync); when
 * Redis returns, the limit applies again.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ANSWER_BOUND_MS = 2000;
const RECOVERY_BOUND_MS = 5000;
const LIMIT = 30;

const logout = (app: App, session: SignedIn) =>
  app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(session.accessToken) });

/** `count` calls of GET /api/user as the session's user: their statuses and the slowest answer. */
async function calls(app: App, session: SignedIn, count: number): Promise<{ statuses: number[]; slowest: number }> {
  const statuses: number[] = [];
  let slowest = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    statuses.push((await whoAmI(app, session.accessToken)).statusCode);
    slowest = Math.max(slowest, performance.now() - started);
  }
  return { statuses, slowest };
}

async function redisOutage(t: Test, how: 'partition' | 'refuse') {
  const providers = await startProviders(t);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
  t.teardown(() => proxy.close());
  const database = await createTestDatabase();
  const env = {
    ...providers.env,
    REDIS_URL: proxy.urlFor('redis://127.0.0.1:6379'),
    RATE_LIMIT_MAX: String(LIMIT),
    AUTH_RATE_LIMIT_IP: '100000',
    DATABASE_URL: database.url,
  };
  const a = await buildTestApp(t, env);
  const b = await buildTestApp(t, env);
  t.teardown(() => database.drop());
  // Users and an address of this run only: the local Redis is shared with other tests and
  // outlives this one, and its counters with it.
  const run = randomBytes(4).toString('hex');
  const from = `10.${randomBytes(3).join('.')}`;
  const limited = await signInWith(a, providers.google, `g-limit-${run}`, {}, from);
  const loggedOut = await signInWith(a, providers.google, `g-out-${run}`, {}, from);
  const afterwards = await signInWith(a, providers.google, `g-after-${run}`, {}, from);

  const before = await calls(a, limited, LIMIT + 5);
  t.ok(before.statuses.includes(429), 'the shared limit applies while Redis answers');

  if (how === 'partition') proxy.partition();
  else proxy.refuse();
  const during = await calls(b, afterwards, LIMIT + 5);
  t.same([...new Set(during.statuses)], [200], 'served without the limit while Redis is unreachable');
  t.ok(
    during.slowest <= ANSWER_BOUND_MS,
    `every request answered within ${ANSWER_BOUND_MS} ms (slowest ${Math.round(during.slowest)} ms)`,
  );
  const started = performance.now();
  t.equal((await logout(a, loggedOut)).statusCode, 200, 'a logout still works');
  t.ok(performance.now() - started <= ANSWER_BOUND_MS, `and answers within ${ANSWER_BOUND_MS} ms`);
  t.equal(
    (await whoAmI(a, loggedOut.accessToken)).statusCode,
    401,
    'the instance that logged it out refuses it at once',
  );
  await sleep(how === 'partition' ? 4000 : 1000);

  proxy.restore();
  const restored = performance.now();
  // A logged-out token is rate limited by its sender's address.
  let refusedOnB: number | undefined;
  while (performance.now() - restored < 3 * RECOVERY_BOUND_MS && refusedOnB === undefined) {
    const res = await b.inject({
      method: 'GET',
      url: '/api/user',
      headers: bearer(loggedOut.accessToken),
      remoteAddress: from,
    });
    if (res.statusCode === 401) refusedOnB = performance.now() - restored;
    else await sleep(100);
  }
  t.ok(
    refusedOnB !== undefined && refusedOnB <= RECOVERY_BOUND_MS,
    `the other instance refuses the logged-out token ${Math.round(refusedOnB ?? Number.NaN)} ms after Redis returned`,
  );
  let limitedAgain: number | undefined;
  while (performance.now() - restored < 3 * RECOVERY_BOUND_MS && limitedAgain === undefined) {
    if ((await calls(b, afterwards, LIMIT + 5)).statuses.includes(429)) limitedAgain = performance.now() - restored;
  }
  t.ok(
    limitedAgain !== undefined && limitedAgain <= RECOVERY_BOUND_MS,
    `the limit applies again ${Math.round(limitedAgain ?? Number.NaN)} ms after Redis returned`,
  );
}

t.test('a network cut between the instances and Redis', (t) => redisOutage(t, 'partition'));
t.test('Redis refusing connections', (t) => redisOutage(t, 'refuse'));
