import { setTimeout as sleep } from 'node:timers/promises';
import { eq, sql } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { identities, refreshTokens, sessions, users, walletLedger } from '../../../../db/schema.js';
import { bearer, buildTestApp, createTestDatabase, tokenFor } from '../../../support/app.js';
import { fund } from '../../../support/economy.js';
import {
  buildSessionApp,
  mobileSignIn,
  newNonce,
  type Providers,
  refresh,
  type SignedIn,
  signInWith,
  startProviders,
  whoAmI,
} from '../../../support/sessions.js';

/**
 * Sessions of our own through the real app: sign-in with the stand-in providers, refresh rotation
 * (retries, reuse, 20 at once), logout in its forms, revocation across two instances (NOTIFY and
 * Redis), account deletion and the stricter rate limits.
 */

/** A subtest's `t`. */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const post = (app: App, url: string, token?: string, payload?: unknown) =>
  app.inject({
    method: 'POST',
    url,
    headers: token ? bearer(token) : {},
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

/** Moves a refresh token's use back in time, past the 30 s retry window (the database's clock decides it). */
async function ageRefreshToken(app: App, refreshToken: string, seconds: number) {
  const { hashRefreshToken } = await import('../../../../plugins/app/sessions/rules.js');
  await app.db.orm
    .update(refreshTokens)
    .set({ usedAt: sql`${refreshTokens.usedAt} - ${`${seconds} seconds`}::interval` })
    .where(eq(refreshTokens.tokenHash, hashRefreshToken(refreshToken)));
}

/** Polls until `check` holds or `withinMs` passes; answers how long it took (or Infinity). */
async function within(withinMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (Date.now() - started <= withinMs) {
    if (await check()) return Date.now() - started;
    await sleep(25);
  }
  return Number.POSITIVE_INFINITY;
}

t.test('signing in, refreshing and logging out, as a mobile app does', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers);

  let first: SignedIn;
  t.test('Google sign-in creates the user and a session', async (t) => {
    const nonce = newNonce();
    const res = await mobileSignIn(
      app,
      { provider: 'google', idToken: providers.google.mint('g-alice', nonce, { name: 'Alice' }), nonce },
      { 'user-agent': 'PacksApp/1.0 (Android 15)' },
    );
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.headers['cache-control'], 'no-store');
    const data = res.json().data;
    t.match(data, { tokenType: 'Bearer', expiresIn: 600, created: true });
    t.match(data.refreshToken, /^[A-Za-z0-9_-]{43}$/);
    first = data;
    const me = await whoAmI(app, data.accessToken);
    t.equal(me.statusCode, 200);
    t.match(me.json().data, { id: data.userId, displayName: 'Alice', isAdmin: false });
    const [stored] = await app.db.orm.select().from(refreshTokens);
    t.not(stored?.tokenHash, data.refreshToken, 'the refresh token is stored hashed');
    t.notOk(JSON.stringify(stored).includes(data.refreshToken), 'nowhere in clear');
  });

  t.test('an ID token signs in once: a replay, even with its nonce, is refused', async (t) => {
    const nonce = newNonce();
    const idToken = providers.google.mint('g-replayed', nonce);
    t.equal((await mobileSignIn(app, { provider: 'google', idToken, nonce })).statusCode, 200);
    const replay = await mobileSignIn(app, { provider: 'google', idToken, nonce });
    t.equal(replay.statusCode, 401);
    t.equal(replay.json().error.message, 'The ID token could not be verified.', 'like any other refusal');
    const copied = providers.google.mint('g-racing', nonce);
    const racing = await Promise.all(
      Array.from({ length: 5 }, () => mobileSignIn(app, { provider: 'google', idToken: copied, nonce })),
    );
    t.equal(racing.filter((res) => res.statusCode === 200).length, 1, 'five copies of one token at once: one session');
  });

  t.test('signing in again finds the same user and opens a second session', async (t) => {
    const again = await signInWith(app, providers.google, 'g-alice');
    t.equal(again.userId, first.userId);
    t.not(again.sessionId, first.sessionId);
    const list = await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: bearer(again.accessToken) });
    t.equal(list.statusCode, 200);
    const rows = list.json().data as { id: string; current: boolean; provider: string; userAgent: string | null }[];
    t.equal(rows.length, 2);
    t.same(
      rows.filter((row) => row.current).map((row) => row.id),
      [again.sessionId],
      'the calling session is marked current',
    );
    t.ok(rows.find((row) => row.id === first.sessionId)?.userAgent?.startsWith('PacksApp'), 'the user agent is kept');
    const ids = await app.inject({ method: 'GET', url: '/api/auth/identities', headers: bearer(again.accessToken) });
    t.match(ids.json().data, [{ provider: 'google', email: 'g-alice@example.com', emailVerified: true }]);
    t.notOk(ids.body.includes('g-alice"'), 'the provider subject is not shown');
  });

  t.test('refresh rotates: JSON, then form-encoded as OAuth clients send it', async (t) => {
    const json = await refresh(app, first.refreshToken);
    t.equal(json.statusCode, 200, json.body);
    t.equal(json.headers['cache-control'], 'no-store');
    const body = json.json();
    t.same(Object.keys(body).sort(), ['access_token', 'expires_in', 'refresh_token', 'token_type']);
    t.not(body.refresh_token, first.refreshToken, 'a new refresh token');
    t.equal((await whoAmI(app, body.access_token)).statusCode, 200, 'the new access token works');

    const retry = await refresh(app, first.refreshToken);
    t.equal(retry.statusCode, 200, 'a retry within 30 s is answered');
    t.equal(retry.json().refresh_token, body.refresh_token, 'with the same successor');

    const form = await refresh(app, body.refresh_token, true);
    t.equal(form.statusCode, 200, form.body);
    first = { ...first, accessToken: form.json().access_token, refreshToken: form.json().refresh_token };
  });

  t.test('OAuth errors come as RFC 6749 bodies', async (t) => {
    const cases: [string, object, string][] = [
      ['another grant, with its own fields', { grant_type: 'password', username: 'a' }, 'unsupported_grant_type'],
      ['unsupported grant_type', { grant_type: 'authorization_code' }, 'unsupported_grant_type'],
      ['no grant_type', { refresh_token: 'A'.repeat(43) }, 'invalid_request'],
      ['a number for grant_type', { grant_type: 7 }, 'invalid_request'],
      [
        'grant_type refresh_token with an unknown field',
        { grant_type: 'refresh_token', refresh_token: 'A'.repeat(43), code: 'x' },
        'invalid_request',
      ],
      ['missing refresh_token', { grant_type: 'refresh_token' }, 'invalid_request'],
      ['a number for a token', { grant_type: 'refresh_token', refresh_token: 5 }, 'invalid_request'],
      ['garbage token', { grant_type: 'refresh_token', refresh_token: 'not-a-token' }, 'invalid_grant'],
      ['well-formed unknown token', { grant_type: 'refresh_token', refresh_token: 'A'.repeat(43) }, 'invalid_grant'],
      [
        'client_id and scope are accepted and ignored',
        { grant_type: 'refresh_token', refresh_token: 'B'.repeat(43), client_id: 'app', scope: 'x' },
        'invalid_grant',
      ],
    ];
    for (const [name, payload, code] of cases) {
      const res = await app.inject({ method: 'POST', url: '/api/auth/token', payload });
      t.equal(res.statusCode, 400, name);
      t.same(Object.keys(res.json()).sort(), ['error', 'error_description'], `${name}: RFC 6749 shape`);
      t.equal(res.json().error, code, name);
      t.equal(res.headers['cache-control'], 'no-store', `${name}: not cached`);
    }
    const duplicate = await app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=refresh_token&refresh_token=a&refresh_token=b',
    });
    t.equal(duplicate.json().error, 'invalid_request', 'a repeated form field is not valid');
    const authorizationCode = await app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=authorization_code&code=x',
    });
    t.same(
      [authorizationCode.statusCode, authorizationCode.json().error],
      [400, 'unsupported_grant_type'],
      'an authorization code grant, form-encoded with its code: the grant is named, not the field',
    );
    const text = await app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'content-type': 'text/plain' },
      payload: 'grant_type=refresh_token',
    });
    t.equal(text.statusCode, 415, 'other content types are refused');
    t.equal(text.json().error.code, 'unsupported_media_type', 'in the envelope');
    const formElsewhere = await app.inject({
      method: 'PATCH',
      url: '/api/user',
      headers: { ...bearer(first.accessToken), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'displayName=x',
    });
    t.equal(formElsewhere.statusCode, 415, 'only the OAuth endpoints take form bodies');
  });

  t.test('logout ends the session: its access and refresh tokens stop at once', async (t) => {
    const res = await post(app, '/api/auth/logout', first.accessToken);
    t.equal(res.statusCode, 200);
    t.same(res.json().data, { ended: 1 });
    const refused = await whoAmI(app, first.accessToken);
    t.equal(refused.statusCode, 401);
    t.equal(refused.json().error.code, 'invalid_token');
    t.equal((await refresh(app, first.refreshToken)).json().error, 'invalid_grant');
    const [row] = await app.db.orm.select().from(sessions).where(eq(sessions.id, first.sessionId));
    t.equal(row?.revokedReason, 'logout');
  });

  t.test("sessions: a user ends another of its sessions; never someone else's", async (t) => {
    const phone = await signInWith(app, providers.google, 'g-bob');
    const tablet = await signInWith(app, providers.google, 'g-bob');
    const mallory = await signInWith(app, providers.apple, 'a-mallory');
    const foreign = await app.inject({
      method: 'DELETE',
      url: `/api/auth/sessions/${phone.sessionId}`,
      headers: bearer(mallory.accessToken),
    });
    t.equal(foreign.statusCode, 404);
    t.equal(foreign.json().error.code, 'session_not_found');
    t.equal((await whoAmI(app, phone.accessToken)).statusCode, 200, 'untouched');
    const own = await app.inject({
      method: 'DELETE',
      url: `/api/auth/sessions/${phone.sessionId}`,
      headers: bearer(tablet.accessToken),
    });
    t.equal(own.statusCode, 204);
    t.equal((await whoAmI(app, phone.accessToken)).statusCode, 401, 'the lost phone is logged out');
    t.equal((await whoAmI(app, tablet.accessToken)).statusCode, 200);
    const again = await app.inject({
      method: 'DELETE',
      url: `/api/auth/sessions/${phone.sessionId}`,
      headers: bearer(tablet.accessToken),
    });
    t.equal(again.statusCode, 404, 'an ended session cannot be ended twice');

    const all = await post(app, '/api/auth/logout-all', tablet.accessToken);
    t.same(all.json().data, { ended: 1 });
    t.equal((await whoAmI(app, tablet.accessToken)).statusCode, 401);
    t.equal((await whoAmI(app, mallory.accessToken)).statusCode, 200, 'other users are not logged out');
  });

  t.test('RFC 7009 revocation', async (t) => {
    const carol = await signInWith(app, providers.google, 'g-carol');
    for (const token of [
      'unknown',
      'a.b.c',
      'C'.repeat(43),
      tokenFor('x', {}, 'wrong-secret-wrong-secret-wrong-secret'),
    ]) {
      const res = await app.inject({ method: 'POST', url: '/api/auth/revoke', payload: { token } });
      t.equal(res.statusCode, 200, 'any token: 200');
      t.equal(res.body, '', 'with an empty body');
    }
    const second = (await refresh(app, carol.refreshToken)).json();
    // Revoking one access token refuses that token only.
    const revokeAccess = await app.inject({
      method: 'POST',
      url: '/api/auth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: carol.accessToken, token_type_hint: 'access_token' }).toString(),
    });
    t.equal(revokeAccess.statusCode, 200);
    t.equal((await whoAmI(app, carol.accessToken)).statusCode, 401, 'the revoked access token is refused');
    t.equal((await whoAmI(app, second.access_token)).statusCode, 200, 'the session lives on');
    // Revoking the refresh token ends the session.
    const revokeRefresh = await app.inject({
      method: 'POST',
      url: '/api/auth/revoke',
      payload: { token: second.refresh_token, token_type_hint: 'refresh_token' },
    });
    t.equal(revokeRefresh.statusCode, 200);
    t.equal((await whoAmI(app, second.access_token)).statusCode, 401, 'its access tokens are refused');
    t.equal((await refresh(app, second.refresh_token)).json().error, 'invalid_grant');
    const missing = await app.inject({ method: 'POST', url: '/api/auth/revoke', payload: {} });
    t.equal(missing.statusCode, 400);
    t.equal(missing.json().error, 'invalid_request');
  });

  t.test('an external-provider token can be logged out until it expires', async (t) => {
    const withJti = tokenFor('ext-dave', { jti: 'jti-1' });
    t.equal((await whoAmI(app, withJti)).statusCode, 200);
    t.equal((await post(app, '/api/auth/logout', withJti)).statusCode, 200);
    t.equal((await whoAmI(app, withJti)).statusCode, 401, 'refused by its jti');
    t.equal(
      (await whoAmI(app, tokenFor('ext-dave', { jti: 'jti-2' }))).statusCode,
      200,
      'another token of the user still works',
    );
    const withoutJti = tokenFor('ext-dave', { name: 'Dave' });
    t.equal((await post(app, '/api/auth/logout', withoutJti)).statusCode, 200);
    t.equal((await whoAmI(app, withoutJti)).statusCode, 401, 'refused by its hash');
    t.equal((await whoAmI(app, tokenFor('ext-dave', { name: 'Dave 2' }))).statusCode, 200);
  });
});

t.test('refresh reuse beyond 30 s revokes the session; 20 concurrent refreshes get one successor', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers);

  t.test('20 concurrent refreshes with one token', async (t) => {
    const signedIn = await signInWith(app, providers.google, 'g-racer');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) => refresh(app, signedIn.refreshToken, index % 2 === 1)),
    );
    t.same(
      answers.map((res) => res.statusCode),
      Array(20).fill(200),
      'all 20 answered',
    );
    const successors = new Set(answers.map((res) => res.json().refresh_token));
    t.equal(successors.size, 1, 'one successor');
    const count = await app.db.orm
      .select({ n: sql<number>`count(*)::int` })
      .from(refreshTokens)
      .where(eq(refreshTokens.sessionId, signedIn.sessionId));
    t.equal(count[0]?.n, 2, 'the database holds the token and exactly one successor');
    const next = await refresh(app, [...successors][0] as string);
    t.equal(next.statusCode, 200, 'the session is alive: the successor redeems');
  });

  t.test('the same token after 30 s: the session is revoked and its access tokens refused', async (t) => {
    const signedIn = await signInWith(app, providers.apple, 'a-victim');
    const rotated = (await refresh(app, signedIn.refreshToken)).json();
    await ageRefreshToken(app, signedIn.refreshToken, 31);
    const reuse = await refresh(app, signedIn.refreshToken);
    t.equal(reuse.statusCode, 400);
    t.equal(reuse.json().error, 'invalid_grant');
    t.equal((await whoAmI(app, rotated.access_token)).statusCode, 401, "the session's access tokens are refused");
    t.equal((await whoAmI(app, signedIn.accessToken)).statusCode, 401);
    t.equal((await refresh(app, rotated.refresh_token)).json().error, 'invalid_grant', 'its newest refresh token too');
    const [row] = await app.db.orm.select().from(sessions).where(eq(sessions.id, signedIn.sessionId));
    t.equal(row?.revokedReason, 'refresh_reuse');
  });

  t.test('a session unused for AUTH_SESSION_TTL has expired', async (t) => {
    const signedIn = await signInWith(app, providers.google, 'g-sleeper');
    await app.db.orm
      .update(sessions)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(sessions.id, signedIn.sessionId));
    t.equal((await refresh(app, signedIn.refreshToken)).json().error, 'invalid_grant');
    const list = await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: bearer(signedIn.accessToken) });
    t.same(list.json().data, [], 'not listed');
  });

  t.test('a refresh slides the session forward', async (t) => {
    const signedIn = await signInWith(app, providers.google, 'g-active');
    await app.db.orm
      .update(sessions)
      .set({ expiresAt: sql`now() + interval '1 minute'` })
      .where(eq(sessions.id, signedIn.sessionId));
    t.equal((await refresh(app, signedIn.refreshToken)).statusCode, 200);
    const [row] = await app.db.orm.select().from(sessions).where(eq(sessions.id, signedIn.sessionId));
    t.ok(
      (row?.expiresAt.getTime() ?? 0) > Date.now() + 59 * 86_400_000,
      'expires AUTH_SESSION_TTL (60 days) after the refresh',
    );
  });
});

t.test('linking a second provider; account deletion', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers);

  t.test('a signed-in user links Apple; either account then signs in as the user', async (t) => {
    const google = await signInWith(app, providers.google, 'g-erin');
    const nonce = newNonce();
    const linked = await post(app, '/api/auth/identities', google.accessToken, {
      provider: 'apple',
      idToken: providers.apple.mint('a-erin', nonce),
      nonce,
    });
    t.equal(linked.statusCode, 201, linked.body);
    t.match(linked.json().data, { provider: 'apple', email: 'a-erin@example.com', emailVerified: true });
    const apple = await signInWith(app, providers.apple, 'a-erin');
    t.equal(apple.userId, google.userId);
    t.equal(apple.created, false);
    const again = await post(app, '/api/auth/identities', google.accessToken, {
      provider: 'apple',
      idToken: providers.apple.mint('a-erin', nonce),
      nonce,
    });
    t.equal(again.statusCode, 201, 'linking the same account again is harmless');
    const forged = await post(app, '/api/auth/identities', google.accessToken, {
      provider: 'apple',
      idToken: providers.apple.mint('a-erin', 'another-nonce-value'),
      nonce,
    });
    t.equal(forged.statusCode, 400, 'an ID token that does not verify is a bad request, not a bad caller');
    t.equal(forged.json().error.code, 'invalid_id_token');
    t.notOk(forged.headers['www-authenticate'], "no challenge: the caller's own token is fine");
    const other = await signInWith(app, providers.google, 'g-frank');
    const taken = await post(app, '/api/auth/identities', other.accessToken, {
      provider: 'apple',
      idToken: providers.apple.mint('a-erin', nonce),
      nonce,
    });
    t.equal(taken.statusCode, 409);
    t.equal(taken.json().error.code, 'identity_in_use');
  });

  t.test('deleting the account leaves no way in and no personal data; the ledger stays', async (t) => {
    const gina = await signInWith(app, providers.google, 'g-gina', { name: 'Gina Personal' });
    await fund(app, { id: gina.userId, token: gina.accessToken }, 50);
    const deleted = await app.inject({ method: 'DELETE', url: '/api/user', headers: bearer(gina.accessToken) });
    t.equal(deleted.statusCode, 204, deleted.body);
    t.equal((await whoAmI(app, gina.accessToken)).statusCode, 401, 'the access token is refused');
    t.equal((await refresh(app, gina.refreshToken)).json().error, 'invalid_grant', 'the refresh token too');
    // The Google account is free again: signing in with it makes a new, empty user, never the old one.
    const back = await signInWith(app, providers.google, 'g-gina');
    t.not(back.userId, gina.userId, 'a new user');
    t.equal(back.created, true);
    const wallet = await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(back.accessToken) });
    t.equal(wallet.json().data.balance, 0, 'nothing of the deleted account comes with it');
    const [row] = await app.db.orm.select().from(users).where(eq(users.id, gina.userId));
    t.equal(row?.displayName, 'Deleted user');
    t.ok(row?.deletedAt);
    t.notOk(JSON.stringify(row).includes('Gina'), 'no name left');
    t.same(
      await app.db.orm.select().from(identities).where(eq(identities.userId, gina.userId)),
      [],
      'identities unlinked (no email left)',
    );
    const ledger = await app.db.orm.select().from(walletLedger).where(eq(walletLedger.userId, gina.userId));
    t.equal(ledger.length, 1, 'the ledger entry stays, under the anonymized user');
  });

  t.test('an external-provider user who deleted the account cannot come back with a new token', async (t) => {
    const token = tokenFor('ext-henry', { jti: 'h-1' });
    t.equal((await whoAmI(app, token)).statusCode, 200);
    t.equal((await app.inject({ method: 'DELETE', url: '/api/user', headers: bearer(token) })).statusCode, 204);
    t.equal((await whoAmI(app, tokenFor('ext-henry', { jti: 'h-2' }))).statusCode, 401);
  });

  t.test('the last owner of a team cannot delete the account', async (t) => {
    const owner = tokenFor('ext-owner');
    t.equal((await whoAmI(app, owner)).statusCode, 200);
    const team = await app.inject({
      method: 'POST',
      url: '/api/admin/teams',
      headers: bearer(tokenFor('admin', { role: 'admin' })),
      payload: { name: 'Owned', ownerUserId: 'ext-owner' },
    });
    t.equal(team.statusCode, 201, team.body);
    const refused = await app.inject({ method: 'DELETE', url: '/api/user', headers: bearer(owner) });
    t.equal(refused.statusCode, 409);
    t.equal(refused.json().error.code, 'last_owner');
    t.equal((await whoAmI(app, owner)).statusCode, 200, 'nothing was deleted');
  });
});

t.test('the sign-in, token and revoke endpoints have stricter limits', async (t) => {
  const providers = await startProviders(t);
  t.test('per address', async (t) => {
    const app = await buildSessionApp(t, providers, { AUTH_RATE_LIMIT_IP: '3', AUTH_RATE_LIMIT_SUBJECT: '100' });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      statuses.push(
        (
          await app.inject({
            method: 'POST',
            url: '/api/auth/token',
            payload: { grant_type: 'refresh_token', refresh_token: 'D'.repeat(43) },
          })
        ).statusCode,
      );
    }
    t.same(statuses, [400, 400, 400, 429]);
    const limited = await refresh(app, 'E'.repeat(43));
    t.equal(limited.json().error.code, 'rate_limited', 'a 429 is in the envelope');
    t.ok(Number(limited.headers['retry-after']) > 0, 'with Retry-After');
    const signIn = await mobileSignIn(app, {
      provider: 'google',
      idToken: providers.google.mint('g-x', 'n'.repeat(16)),
      nonce: 'n'.repeat(16),
    });
    t.equal(signIn.statusCode, 429, 'sign-in shares the address limit');
  });
  t.test('per provider account', async (t) => {
    const app = await buildSessionApp(t, providers, { AUTH_RATE_LIMIT_IP: '100', AUTH_RATE_LIMIT_SUBJECT: '2' });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const nonce = newNonce();
      statuses.push(
        (await mobileSignIn(app, { provider: 'google', idToken: providers.google.mint('g-busy', nonce), nonce }))
          .statusCode,
      );
    }
    t.same(statuses, [200, 200, 429]);
    t.equal(
      (await signInWith(app, providers.google, 'g-quiet')).userId.length > 0,
      true,
      'another account is not limited',
    );
  });
});

/** Two instances on one database: what one logs out, the other refuses within a second. */
async function twoInstances(t: Test, providers: Providers, env: Record<string, string> = {}) {
  const database = await createTestDatabase();
  const a = await buildTestApp(t, { ...providers.env, DATABASE_URL: database.url, ...env });
  const b = await buildTestApp(t, { ...providers.env, DATABASE_URL: database.url, ...env });
  // Teardowns run in reverse: both apps close before the database is dropped.
  t.teardown(() => database.drop());
  return { a, b };
}

for (const bus of ['PostgreSQL LISTEN/NOTIFY', 'Redis pub/sub']) {
  t.test(`two instances, revocations over ${bus}`, async (t) => {
    const providers = await startProviders(t);
    const env: Record<string, string> = bus.startsWith('Redis')
      ? { REDIS_URL: 'redis://127.0.0.1:6379', AUTH_RATE_LIMIT_IP: '100000' }
      : {};
    const { a, b } = await twoInstances(t, providers, env);

    t.test('logout on A: the old access token is refused on B within 1 s', async (t) => {
      const signedIn = await signInWith(a, providers.google, 'g-two');
      t.equal((await whoAmI(b, signedIn.accessToken)).statusCode, 200, 'B accepts it first');
      t.equal((await post(a, '/api/auth/logout', signedIn.accessToken)).statusCode, 200);
      const took = await within(1000, async () => (await whoAmI(b, signedIn.accessToken)).statusCode === 401);
      t.ok(took <= 1000, `refused on B after ${took} ms`);
    });

    t.test('an external token logged out on B is refused on A within 1 s', async (t) => {
      const token = tokenFor('ext-two', { jti: `two-${bus}` });
      t.equal((await whoAmI(a, token)).statusCode, 200);
      t.equal((await post(b, '/api/auth/logout', token)).statusCode, 200);
      const took = await within(1000, async () => (await whoAmI(a, token)).statusCode === 401);
      t.ok(took <= 1000, `refused on A after ${took} ms`);
    });

    t.test('20 concurrent refreshes spread over both instances: one successor', async (t) => {
      const signedIn = await signInWith(a, providers.apple, 'a-two');
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) => refresh(index % 2 ? a : b, signedIn.refreshToken)),
      );
      t.same(
        answers.map((res) => res.statusCode),
        Array(20).fill(200),
      );
      t.equal(new Set(answers.map((res) => res.json().refresh_token)).size, 1);
    });

    t.test('reuse detected on B revokes the session on A within 1 s', async (t) => {
      const signedIn = await signInWith(a, providers.google, 'g-stolen');
      const rotated = (await refresh(a, signedIn.refreshToken)).json();
      await ageRefreshToken(a, signedIn.refreshToken, 31);
      t.equal((await refresh(b, signedIn.refreshToken)).json().error, 'invalid_grant');
      const took = await within(1000, async () => (await whoAmI(a, rotated.access_token)).statusCode === 401);
      t.ok(took <= 1000, `refused on A after ${took} ms`);
    });

    t.test('a new instance starting after a logout refuses the token from its first request', async (t) => {
      const signedIn = await signInWith(a, providers.google, 'g-late');
      await post(a, '/api/auth/logout', signedIn.accessToken);
      const database = (a.config.databaseUrl ?? '') as string;
      const c = await buildTestApp(t, { ...providers.env, DATABASE_URL: database, ...env });
      t.equal((await whoAmI(c, signedIn.accessToken)).statusCode, 401);
    });
  });
}

t.test('with AUTH_SESSIONS=false the Auth group answers 404 and external tokens work as before', async (t) => {
  const app = await buildTestApp(t, { AUTH_SESSIONS: 'false' });
  t.equal(app.sessions, null);
  for (const [method, url] of [
    ['POST', '/api/auth/mobile/token'],
    ['POST', '/api/auth/token'],
    ['GET', '/.well-known/jwks.json'],
  ] as const) {
    const res = await app.inject({
      method,
      url,
      ...(method === 'POST'
        ? {
            payload: url.endsWith('mobile/token')
              ? { provider: 'google', idToken: 'a.b.c', nonce: 'n'.repeat(16) }
              : { grant_type: 'refresh_token', refresh_token: 'x' },
          }
        : {}),
    });
    t.equal(res.statusCode, 404, `${method} ${url}`);
  }
  t.equal((await whoAmI(app, tokenFor('ext-ivy'))).statusCode, 200);
});
