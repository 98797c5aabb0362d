import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { identities, users } from '../../../../db/schema.js';
import { bearer, buildTestApp, createTestDatabase, tokenFor } from '../../../support/app.js';
import { addMemberRequest, createTeam } from '../../../support/teams.js';
import {
  buildSessionApp,
  mobileSignIn,
  newNonce,
  refresh,
  signInWith,
  startProviders,
  whoAmI,
} from '../../../support/sessions.js';
import { startStandInProvider } from '../../../../scripts/stand-in-provider.js';

/**
 * Sessions against the attacks and failures a review found: other spellings of one token,
 * account deletion racing other changes, provider and Redis outages, a retry after the
 * successor was used, and what a logged-out token may still cost its user.
 */

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The same token spelled differently: the signature's last character with its lowest (unused) bit flipped. */
function respell(token: string): string {
  const last = token.at(-1) as string;
  return token.slice(0, -1) + BASE64URL[BASE64URL.indexOf(last) ^ 1];
}

const post = (app: App, url: string, token: string, payload?: object) =>
  app.inject({ method: 'POST', url, headers: bearer(token), ...(payload ? { payload } : {}) });

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

t.test('another spelling of one token is the same token', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers);

  t.test('an ID token and its nonce sign in once, however the signature is spelled', async (t) => {
    const nonce = newNonce();
    const idToken = providers.google.mint('g-spelled', nonce);
    t.equal((await mobileSignIn(app, { provider: 'google', idToken, nonce })).statusCode, 200);
    const again = await mobileSignIn(app, { provider: 'google', idToken: respell(idToken), nonce });
    t.equal(again.statusCode, 401, 'the respelled copy is a replay');
  });

  t.test('an external token without jti, logged out, stays out in every spelling', async (t) => {
    const token = tokenFor('ext-spelled', { name: 'Spelled' });
    const copy = respell(token);
    t.equal((await whoAmI(app, copy)).statusCode, 200, 'the control: the copy verifies as the same token');
    t.equal((await post(app, '/api/auth/logout', token)).statusCode, 200);
    t.equal((await whoAmI(app, token)).statusCode, 401);
    t.equal((await whoAmI(app, copy)).statusCode, 401, 'the respelled copy is refused too');
  });
});

t.test('account deletion racing other changes of the account', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers);

  t.test('a rename in flight never brings the name back', async (t) => {
    for (let round = 0; round < 8; round++) {
      const user = await signInWith(app, providers.google, `g-rename-${round}`);
      await Promise.all([
        app.inject({
          method: 'PATCH',
          url: '/api/user',
          headers: bearer(user.accessToken),
          payload: { displayName: 'Real Name' },
        }),
        app.inject({ method: 'DELETE', url: '/api/user', headers: bearer(user.accessToken) }),
      ]);
      const [row] = await app.db.orm.select().from(users).where(eq(users.id, user.userId));
      if (row?.deletedAt) t.equal(row.displayName, 'Deleted user', `round ${round}: anonymous`);
    }
  });

  t.test('a link in flight leaves no identity (and no email) on a deleted account', async (t) => {
    for (let round = 0; round < 8; round++) {
      const user = await signInWith(app, providers.google, `g-link-${round}`);
      const nonce = newNonce();
      await Promise.all([
        post(app, '/api/auth/identities', user.accessToken, {
          provider: 'apple',
          idToken: providers.apple.mint(`a-link-${round}`, nonce),
          nonce,
        }),
        app.inject({ method: 'DELETE', url: '/api/user', headers: bearer(user.accessToken) }),
      ]);
      const [row] = await app.db.orm.select().from(users).where(eq(users.id, user.userId));
      const left = await app.db.orm.select().from(identities).where(eq(identities.userId, user.userId));
      if (row?.deletedAt) t.same(left, [], `round ${round}: nothing linked to the deleted account`);
    }
  });

  t.test('a deleted account cannot be made a team member or owner', async (t) => {
    const gone = tokenFor('ext-gone');
    t.equal((await whoAmI(app, gone)).statusCode, 200);
    t.equal((await app.inject({ method: 'DELETE', url: '/api/user', headers: bearer(gone) })).statusCode, 204);
    const team = await createTeam(app, { name: 'Living' });
    const added = await addMemberRequest(app, team.id, { userId: 'ext-gone', role: 'owner' });
    t.equal(added.statusCode, 404);
    t.equal(added.json().error.code, 'user_not_found');
    const owned = await app.inject({
      method: 'POST',
      url: '/api/admin/teams',
      headers: bearer(tokenFor('admin', { role: 'admin' })),
      payload: { name: 'Ghost', ownerUserId: 'ext-gone' },
    });
    t.equal(owned.statusCode, 404);
  });
});

t.test('a retry of a token whose successor was already used is reuse', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers);
  const user = await signInWith(app, providers.google, 'g-retry');
  const second = (await refresh(app, user.refreshToken)).json();
  t.equal((await refresh(app, second.refresh_token)).statusCode, 200, 'the client moved on');
  const replay = await refresh(app, user.refreshToken);
  t.equal(replay.json().error, 'invalid_grant', 'within 30 s, but after the successor was used: refused');
  t.equal((await whoAmI(app, second.access_token)).statusCode, 401, 'and the session is revoked');
});

t.test('ending an expired session is a 404, like any session that is not live', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers);
  const phone = await signInWith(app, providers.google, 'g-expired');
  const tablet = await signInWith(app, providers.google, 'g-expired');
  const { sessions } = await import('../../../../db/schema.js');
  const { sql } = await import('drizzle-orm');
  await app.db.orm
    .update(sessions)
    .set({ expiresAt: sql`now() - interval '1 second'` })
    .where(eq(sessions.id, phone.sessionId));
  const res = await app.inject({
    method: 'DELETE',
    url: `/api/auth/sessions/${phone.sessionId}`,
    headers: bearer(tablet.accessToken),
  });
  t.equal(res.statusCode, 404);
});

t.test('outages are 503, never a 401 that tells a good client its token is bad', async (t) => {
  t.test('a provider whose keys cannot be fetched', async (t) => {
    const google = await startStandInProvider('google');
    const app = await buildTestApp(t, google.env);
    const nonce = newNonce();
    const idToken = google.mint('g-outage', nonce);
    await google.close();
    const res = await mobileSignIn(app, { provider: 'google', idToken, nonce });
    t.equal(res.statusCode, 503, res.body);
    t.equal(res.json().error.code, 'auth_unavailable');
    t.ok(res.headers['retry-after']);
  });

  t.test('revoking an external token while its keys cannot be fetched', async (t) => {
    const app = await buildTestApp(t, {
      AUTH_JWT_SECRET: '',
      AUTH_JWKS_URL: `http://127.0.0.1:${await freePort()}/jwks.json`,
    });
    const { generateKeyPairSync } = await import('node:crypto');
    const { createSigner } = await import('fast-jwt');
    const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const token = createSigner({ key, algorithm: 'RS256', kid: 'k1', expiresIn: 600_000 })({
      sub: 'ext-outage',
      jti: 'j',
    });
    const res = await app.inject({ method: 'POST', url: '/api/auth/revoke', payload: { token } });
    t.equal(res.statusCode, 503, 'not a 200 that claims the token is revoked');
    t.equal(res.json().error.code, 'auth_unavailable');
  });
});

t.test("a logged-out token counts against its sender's address, not its user's limit", async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers, { RATE_LIMIT_MAX: '5' });
  const stolen = await signInWith(app, providers.google, 'g-limited');
  t.equal((await post(app, '/api/auth/logout', stolen.accessToken)).statusCode, 200);
  // The user signs in again (on another instance, whose own count of this address is fresh).
  const other = await buildSessionApp(t, providers, {
    RATE_LIMIT_MAX: '5',
    DATABASE_URL: app.config.databaseUrl as string,
  });
  const session = await signInWith(other, providers.google, 'g-limited');
  for (let attempt = 0; attempt < 6; attempt++) await whoAmI(app, stolen.accessToken);
  t.equal(
    (await whoAmI(app, session.accessToken)).statusCode,
    200,
    "the user's own limit is untouched by the stolen token's calls",
  );
});

t.test('an instance started while Redis is down hears logouts once Redis is back', async (t) => {
  const providers = await startProviders(t);
  const port = await freePort();
  const env = { ...providers.env, REDIS_URL: `redis://127.0.0.1:${port}`, AUTH_RATE_LIMIT_IP: '100000' };
  const database = await createTestDatabase();
  const a = await buildTestApp(t, { ...env, DATABASE_URL: database.url });
  const b = await buildTestApp(t, { ...env, DATABASE_URL: database.url });
  t.teardown(() => database.drop());
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  t.teardown(() => {
    redis.kill('SIGTERM');
  });
  const user = await signInWith(a, providers.google, 'g-redis-late');
  // Both instances reconnect with backoff; a probe logout shows when B hears the bus.
  let heard = false;
  for (let attempt = 0; attempt < 60 && !heard; attempt++) {
    const probe = await signInWith(a, providers.google, `g-probe-${attempt}`);
    await post(a, '/api/auth/logout', probe.accessToken);
    await sleep(250);
    heard = (await whoAmI(b, probe.accessToken)).statusCode === 401;
  }
  t.ok(heard, 'B hears the bus once Redis is up');
  t.equal((await post(a, '/api/auth/logout', user.accessToken)).statusCode, 200);
  let refusedAfter = Number.POSITIVE_INFINITY;
  const started = Date.now();
  while (Date.now() - started < 1000) {
    if ((await whoAmI(b, user.accessToken)).statusCode === 401) {
      refusedAfter = Date.now() - started;
      break;
    }
    await sleep(25);
  }
  t.ok(refusedAfter <= 1000, `refused on B after ${refusedAfter} ms`);
});

t.test('the two id spaces never meet: an external token naming a user of mobile sign-in is refused', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers);
  const mobile = await signInWith(app, providers.google, 'g-own-space');
  const impostor = await whoAmI(app, tokenFor(mobile.userId, { jti: 'impostor' }));
  t.equal(impostor.statusCode, 401, 'an external token with the mobile user id as its sub');
  t.equal(impostor.json().error.code, 'invalid_token');
  t.equal((await whoAmI(app, mobile.accessToken)).statusCode, 200, 'the user itself is unaffected');

  // The other way is fine: an external user links Apple, then signs in with it through our sessions.
  const external = tokenFor('ext-linker');
  t.equal((await whoAmI(app, external)).statusCode, 200);
  const nonce = newNonce();
  const linked = await post(app, '/api/auth/identities', external, {
    provider: 'apple',
    idToken: providers.apple.mint('a-linker', nonce),
    nonce,
  });
  t.equal(linked.statusCode, 201, linked.body);
  const viaApple = await signInWith(app, providers.apple, 'a-linker');
  t.equal(viaApple.userId, 'ext-linker');
  t.equal((await whoAmI(app, viaApple.accessToken)).statusCode, 200, 'our session token for an external user');
  t.equal((await whoAmI(app, external)).statusCode, 200, 'and the provider token still works');
});
