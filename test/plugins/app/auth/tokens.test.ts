import { constants, createHmac, generateKeyPairSync, type KeyObject, sign as cryptoSign } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSigner } from 'fast-jwt';
import type { LightMyRequestResponse } from 'fastify';
import t from 'tap';
import { users } from '../../../../db/schema.js';
import type { App } from '../../../../app.js';
import { buildTestApp, bearer, TEST_SECRET, tokenFor } from '../../../support/app.js';
import { b64, type Claims, type ErrorBody, hmacToken, now, type Test } from '../../../support/jwt.js';

/**
 * Bearer-token verification, through the real app and
 * GET /api/user (which provisions the caller): every bad token is a 401 in the error envelope
 * with a Bearer challenge, and no rejected subject ever gets a users row.
 */

interface UserBody {
  success: true;
  data: { id: string; displayName: string; isAdmin: boolean; teams: unknown[]; createdAt: string };
}

/** A payload that the service accepts, with overrides (an override of `undefined` drops the claim). */
function payloadFor(sub: string | undefined, claims: Claims = {}): Claims {
  const payload: Claims = { sub, iat: now(), exp: now() + 3600, ...claims };
  for (const key of Object.keys(payload)) if (payload[key] === undefined) delete payload[key];
  return payload;
}

const hs256 = (payload: Claims, key: string | Buffer = TEST_SECRET, extraHeader: Claims = {}) =>
  hmacToken({ alg: 'HS256', typ: 'JWT', ...extraHeader }, payload, key);

/** A hand-built asymmetric token, so the header can carry anything (jwk, jku, kid...). */
function asymmetricToken(header: Claims & { alg: string }, payload: Claims, privateKey: KeyObject): string {
  const input = Buffer.from(`${b64(header)}.${b64(payload)}`);
  const hash = { RS256: 'sha256', RS512: 'sha512', PS256: 'sha256', ES256: 'sha256', ES384: 'sha384', EdDSA: null }[
    header.alg
  ];
  if (hash === undefined) throw new Error(`no signer for ${header.alg}`);
  const key = header.alg.startsWith('ES')
    ? { key: privateKey, dsaEncoding: 'ieee-p1363' as const }
    : header.alg.startsWith('PS')
      ? { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }
      : privateKey;
  return `${input.toString()}.${cryptoSign(hash, input, key).toString('base64url')}`;
}

/** A library-signed asymmetric token (fast-jwt), to show real tokens interoperate. */
function libraryToken(algorithm: 'RS256' | 'ES256' | 'EdDSA', privateKey: KeyObject, payload: Claims, kid?: string) {
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return createSigner({ key: pem, algorithm, ...(kid ? { kid } : {}) })(payload);
}

const getUser = (app: App, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url: '/api/user', headers });
const withAuth = (authorization: string) => ({ authorization });

/**
 * The one shape every rejection must have: 401, the error envelope with the request id, a Bearer
 * challenge, nothing leaked, and no users row for the subject.
 */
async function expectRejected(
  t: Test,
  app: App,
  res: LightMyRequestResponse,
  expected: { code: 'missing_credentials' | 'invalid_token' | 'token_expired'; sub?: string; token?: string },
) {
  t.equal(res.statusCode, 401, `status 401 (got ${res.statusCode})`);
  const body = res.json<Partial<ErrorBody>>();
  t.equal(body.success, false, 'success false');
  t.equal(body.error?.code, expected.code, `code ${expected.code}`);
  t.ok(typeof body.error?.message === 'string' && body.error.message.length > 0, 'has a message');
  t.equal(body.error?.requestId, res.headers['x-request-id'], 'requestId is the x-request-id');
  t.same(Object.keys(body).sort(), ['error', 'success'], 'envelope keys');
  const challenge = String(res.headers['www-authenticate'] ?? '');
  t.match(challenge, /^Bearer /, 'www-authenticate starts with Bearer');
  if (expected.code === 'missing_credentials') t.equal(challenge, 'Bearer realm="api"', 'bare challenge');
  else
    t.match(
      challenge,
      /^Bearer realm="api", error="invalid_token", error_description="[^"]+"$/,
      'invalid_token challenge',
    );
  for (const text of [res.body, challenge]) {
    if (expected.token) t.notOk(text.includes(expected.token), 'the token is not echoed');
    if (expected.token) t.notOk(text.includes(expected.token.split('.')[2] || '\u0000'), 'no signature echoed');
    t.notMatch(text, /FAST_JWT|FST_/i, 'no library error codes');
    t.notMatch(text, /\n\s+at |\.js:\d+|\.ts:\d+/, 'no stack trace');
  }
  if (expected.sub !== undefined) {
    t.equal(
      await app.users.findById(expected.sub),
      undefined,
      `no users row for ${JSON.stringify(expected.sub.slice(0, 40))}`,
    );
  }
}

/**
 * The one shape of "tokens cannot be checked right now": 503 auth_unavailable in the error envelope
 * with a Retry-After, never 401 (a valid token must not be told it is invalid), nothing leaked.
 */
async function expectUnavailable(
  t: Test,
  app: App,
  res: LightMyRequestResponse,
  expected: { retryAfter: '30' | '3600'; sub: string; token: string },
) {
  t.equal(res.statusCode, 503, `status 503 (got ${res.statusCode})`);
  const body = res.json<Partial<ErrorBody>>();
  t.equal(body.success, false, 'success false');
  t.equal(body.error?.code, 'auth_unavailable', 'code auth_unavailable');
  t.equal(body.error?.requestId, res.headers['x-request-id'], 'requestId is the x-request-id');
  t.equal(res.headers['retry-after'], expected.retryAfter, `retry-after ${expected.retryAfter}`);
  t.notOk(res.body.includes(expected.token), 'the token is not echoed');
  t.notMatch(res.body, /ECONNREFUSED|FST_|FAST_JWT|127\.0\.0\.1|fetch failed|JWK_NOT_FOUND/);
  t.notMatch(res.body, /\n\s+at |\.js:\d+|\.ts:\d+/, 'no stack trace');
  t.equal(await app.users.findById(expected.sub), undefined, `no users row for ${expected.sub}`);
}

async function expectAccepted(t: Test, app: App, res: LightMyRequestResponse, sub: string) {
  t.equal(res.statusCode, 200, `accepted (${res.statusCode === 200 ? 'ok' : res.body})`);
  const body = res.json<UserBody>();
  t.equal(body.success, true);
  t.equal(body.data.id, sub);
  const row = await app.users.findById(sub);
  t.equal(row?.id, sub, 'the subject was provisioned');
}

async function userIds(app: App): Promise<string[]> {
  const rows = await app.db.orm.select({ id: users.id }).from(users);
  return rows.map((row) => row.id).sort();
}

// ---------------------------------------------------------------------------------------------
// HS256 secret (the test default)
// ---------------------------------------------------------------------------------------------

t.test('HS256 secret configuration', async (t) => {
  const app = await buildTestApp(t);
  const accepted: string[] = [];

  t.test('the control: a valid HS256 token from the helper is accepted', async (t) => {
    await expectAccepted(t, app, await getUser(app, bearer(tokenFor('hs-control'))), 'hs-control');
    accepted.push('hs-control');
  });

  t.test('malformed Authorization headers', async (t) => {
    const token = tokenFor('hs-malformed');
    t.test('no Authorization header is missing_credentials', async (t) => {
      await expectRejected(t, app, await getUser(app), { code: 'missing_credentials' });
    });
    t.test('an empty Authorization header is missing_credentials', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth('')), { code: 'missing_credentials' });
    });
    t.test('"Bearer" alone', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth('Bearer')), { code: 'invalid_token' });
    });
    t.test('"Bearer " with a trailing space and nothing else', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth('Bearer ')), { code: 'invalid_token' });
    });
    t.test('"Bearer" + two spaces + a valid token', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth(`Bearer  ${token}`)), {
        code: 'invalid_token',
        sub: 'hs-malformed',
        token,
      });
    });
    t.test('a valid token followed by a trailing space', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth(`Bearer ${token} `)), {
        code: 'invalid_token',
        sub: 'hs-malformed',
        token,
      });
    });
    t.test('the Basic scheme', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth('Basic YWxpY2U6c2VjcmV0')), { code: 'invalid_token' });
    });
    t.test('lowercase "bearer" with a valid token', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth(`bearer ${token}`)), {
        code: 'invalid_token',
        sub: 'hs-malformed',
        token,
      });
    });
    t.test('a raw token without a scheme', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth(token)), {
        code: 'invalid_token',
        sub: 'hs-malformed',
        token,
      });
    });
    t.test('a garbage token with two segments', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth('Bearer abc.def')), { code: 'invalid_token' });
    });
    t.test('a garbage token with three segments that are not JSON', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth('Bearer abc.def.ghi')), { code: 'invalid_token' });
    });
    t.test('four segments', async (t) => {
      await expectRejected(t, app, await getUser(app, withAuth(`Bearer ${token}.xyz`)), {
        code: 'invalid_token',
        sub: 'hs-malformed',
      });
    });
    t.test('a header that is a JSON array, validly signed', async (t) => {
      const input = `${b64(['HS256'])}.${b64(payloadFor('hs-array-header'))}`;
      const forged = `${input}.${createHmac('sha256', TEST_SECRET).update(input).digest('base64url')}`;
      await expectRejected(t, app, await getUser(app, bearer(forged)), {
        code: 'invalid_token',
        sub: 'hs-array-header',
        token: forged,
      });
    });
    t.test('a payload that is not JSON, validly signed', async (t) => {
      const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64('not json {')}`;
      const forged = `${input}.${createHmac('sha256', TEST_SECRET).update(input).digest('base64url')}`;
      await expectRejected(t, app, await getUser(app, bearer(forged)), { code: 'invalid_token', token: forged });
    });
    t.test('a payload that is a JSON array, validly signed', async (t) => {
      const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(['hs-array-payload'])}`;
      const forged = `${input}.${createHmac('sha256', TEST_SECRET).update(input).digest('base64url')}`;
      await expectRejected(t, app, await getUser(app, bearer(forged)), { code: 'invalid_token', token: forged });
    });
  });

  t.test('alg none', async (t) => {
    const payload = payloadFor('hs-alg-none');
    t.test('with an empty signature', async (t) => {
      const forged = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`;
      await expectRejected(t, app, await getUser(app, bearer(forged)), {
        code: 'invalid_token',
        sub: 'hs-alg-none',
        token: forged,
      });
    });
    t.test('with a non-empty signature (the HS256 MAC of the input)', async (t) => {
      const input = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}`;
      const forged = `${input}.${createHmac('sha256', TEST_SECRET).update(input).digest('base64url')}`;
      await expectRejected(t, app, await getUser(app, bearer(forged)), {
        code: 'invalid_token',
        sub: 'hs-alg-none',
        token: forged,
      });
    });
    t.test('"None" and "NONE" spellings', async (t) => {
      for (const alg of ['None', 'NONE', 'nOnE']) {
        const forged = `${b64({ alg, typ: 'JWT' })}.${b64(payload)}.`;
        await expectRejected(t, app, await getUser(app, bearer(forged)), {
          code: 'invalid_token',
          sub: 'hs-alg-none',
          token: forged,
        });
      }
    });
    t.test('no alg at all', async (t) => {
      const forged = hmacToken({ typ: 'JWT' }, payload, TEST_SECRET);
      await expectRejected(t, app, await getUser(app, bearer(forged)), {
        code: 'invalid_token',
        sub: 'hs-alg-none',
        token: forged,
      });
    });
    t.test('a valid HS256 header with the signature stripped', async (t) => {
      const valid = hs256(payload);
      const stripped = `${valid.split('.').slice(0, 2).join('.')}.`;
      await expectRejected(t, app, await getUser(app, bearer(stripped)), {
        code: 'invalid_token',
        sub: 'hs-alg-none',
        token: stripped,
      });
    });
  });

  t.test('forged signatures', async (t) => {
    t.test('signed with the wrong secret', async (t) => {
      const forged = tokenFor('hs-wrong-secret', {}, 'another-secret-that-is-long-enough-for-the-check');
      await expectRejected(t, app, await getUser(app, bearer(forged)), {
        code: 'invalid_token',
        sub: 'hs-wrong-secret',
        token: forged,
      });
    });
    t.test('signed with an empty-string HMAC key', async (t) => {
      const forged = hs256(payloadFor('hs-empty-key'), '');
      await expectRejected(t, app, await getUser(app, bearer(forged)), {
        code: 'invalid_token',
        sub: 'hs-empty-key',
        token: forged,
      });
    });
    t.test('a valid token whose payload was swapped', async (t) => {
      const [header, , signature] = tokenFor('hs-victim').split('.');
      const forged = `${header}.${b64(payloadFor('hs-swapped'))}.${signature}`;
      await expectRejected(t, app, await getUser(app, bearer(forged)), {
        code: 'invalid_token',
        sub: 'hs-swapped',
        token: forged,
      });
      t.equal(await app.users.findById('hs-victim'), undefined);
    });
    t.test('an expired token with a wrong signature is invalid_token, not token_expired', async (t) => {
      const forged = hs256(payloadFor('hs-expired-forged', { exp: now() - 3600 }), 'not-the-secret');
      await expectRejected(t, app, await getUser(app, bearer(forged)), {
        code: 'invalid_token',
        sub: 'hs-expired-forged',
        token: forged,
      });
    });
  });

  t.test('time claims (30 s clock tolerance)', async (t) => {
    t.test('expired an hour ago is token_expired', async (t) => {
      const token = hs256(payloadFor('hs-expired', { iat: now() - 7200, exp: now() - 3600 }));
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'token_expired',
        sub: 'hs-expired',
        token,
      });
    });
    t.test('expired 60 s ago (beyond the tolerance) is token_expired', async (t) => {
      const token = hs256(payloadFor('hs-expired-60', { iat: now() - 600, exp: now() - 60 }));
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'token_expired',
        sub: 'hs-expired-60',
        token,
      });
    });
    t.test('expired only 10 s ago is still accepted', async (t) => {
      const token = hs256(payloadFor('hs-expired-10', { iat: now() - 600, exp: now() - 10 }));
      await expectAccepted(t, app, await getUser(app, bearer(token)), 'hs-expired-10');
      accepted.push('hs-expired-10');
    });
    t.test('nbf 5 minutes in the future is rejected', async (t) => {
      const token = hs256(payloadFor('hs-nbf-future', { nbf: now() + 300 }));
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-nbf-future',
        token,
      });
    });
    t.test('nbf 10 s in the future is accepted', async (t) => {
      const token = hs256(payloadFor('hs-nbf-10', { nbf: now() + 10 }));
      await expectAccepted(t, app, await getUser(app, bearer(token)), 'hs-nbf-10');
      accepted.push('hs-nbf-10');
    });
    t.test('nbf given as a string is rejected', async (t) => {
      const token = hs256(payloadFor('hs-nbf-string', { nbf: String(now() + 3600) }));
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-nbf-string',
        token,
      });
    });
  });

  t.test('required and typed claims', async (t) => {
    t.test('missing sub', async (t) => {
      const token = hs256(payloadFor(undefined, { name: 'nobody' }));
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', token });
    });
    t.test('empty-string sub', async (t) => {
      const token = hs256(payloadFor(''));
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub: '', token });
    });
    t.test('missing exp', async (t) => {
      const token = hs256(payloadFor('hs-no-exp', { exp: undefined }));
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-no-exp',
        token,
      });
    });
    t.test('exp given as a string', async (t) => {
      const token = hs256(payloadFor('hs-exp-string', { exp: '9999999999' }));
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-exp-string',
        token,
      });
    });
    t.test('exp given as null', async (t) => {
      const token = hs256(payloadFor('hs-exp-null', { exp: null }));
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-exp-null',
        token,
      });
    });
    t.test('sub given as a number', async (t) => {
      const token = hs256(payloadFor(undefined, { sub: 12345 }));
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub: '12345', token });
    });
    t.test('sub given as an array', async (t) => {
      const token = hs256(payloadFor(undefined, { sub: ['hs-sub-array'] }));
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-sub-array',
        token,
      });
    });
    t.test('sub of 129 characters is rejected', async (t) => {
      const sub = `hs-long-${'x'.repeat(121)}`;
      t.equal(sub.length, 129);
      const token = hs256(payloadFor(sub));
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub, token });
    });
    t.test('sub of 10 000 characters is rejected', async (t) => {
      const sub = 'y'.repeat(10_000);
      const token = hs256(payloadFor(sub));
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub, token });
    });
    t.test('a validly signed sub containing a NUL character is 401, not 500, and gets no users row', async (t) => {
      const sub = 'hs-nul\u0000sub';
      const token = hs256(payloadFor(sub));
      // No `sub` here: PostgreSQL cannot even be asked about a NUL; the table is checked instead.
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', token });
      t.notOk(
        (await userIds(app)).some((id) => id.startsWith('hs-nul')),
        'no users row for the subject or its prefix',
      );
    });
    t.test('a sub that is only a NUL character is 401', async (t) => {
      const token = hs256(payloadFor('\u0000'));
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', token });
    });
    for (const [name, character] of [
      ['U+0001', '\u0001'],
      ['a tab', '\t'],
      ['a newline', '\n'],
      ['U+001F', '\u001f'],
      ['U+007F (DEL)', '\u007f'],
    ]) {
      t.test(`a sub containing ${name} is 401`, async (t) => {
        const sub = `hs-control-${character}-sub`;
        const token = hs256(payloadFor(sub));
        await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub, token });
      });
    }
    t.test('a sub with a trailing control character at the length limit is 401', async (t) => {
      const sub = `hs-ctl-${'c'.repeat(120)}\u001f`;
      t.equal(sub.length, 128);
      const token = hs256(payloadFor(sub));
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub, token });
    });
    t.test('sub of exactly 128 characters is accepted', async (t) => {
      const sub = `hs-max-${'z'.repeat(121)}`;
      t.equal(sub.length, 128);
      await expectAccepted(t, app, await getUser(app, bearer(hs256(payloadFor(sub)))), sub);
      accepted.push(sub);
    });
    t.test('a sub of one character is accepted', async (t) => {
      await expectAccepted(t, app, await getUser(app, bearer(hs256(payloadFor('h')))), 'h');
      accepted.push('h');
    });
    t.test('a sub with spaces and non-ASCII letters (no control characters) is accepted', async (t) => {
      const sub = 'hs user é 名';
      await expectAccepted(t, app, await getUser(app, bearer(hs256(payloadFor(sub)))), sub);
      accepted.push(sub);
    });
  });

  t.test('critical header extensions are rejected even when validly signed', async (t) => {
    for (const crit of [['exp'], ['b64'], ['x-custom']]) {
      t.test(`crit: ${JSON.stringify(crit)}`, async (t) => {
        const extra: Claims = {
          crit,
          ...(crit[0] === 'b64' ? { b64: false } : {}),
          ...(crit[0] === 'x-custom' ? { 'x-custom': 1 } : {}),
        };
        const token = hs256(payloadFor('hs-crit'), TEST_SECRET, extra);
        await expectRejected(t, app, await getUser(app, bearer(token)), {
          code: 'invalid_token',
          sub: 'hs-crit',
          token,
        });
      });
    }
    t.test('an empty crit array', async (t) => {
      const token = hs256(payloadFor('hs-crit'), TEST_SECRET, { crit: [] });
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub: 'hs-crit', token });
    });
  });

  t.test('key-locating headers never choose the key', async (t) => {
    const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const attackerJwk = { ...attacker.publicKey.export({ format: 'jwk' }), kid: 'evil', alg: 'RS256', use: 'sig' };
    const cases: Array<[string, Claims]> = [
      ['jku', { jku: 'https://attacker.example/.well-known/jwks.json' }],
      ['x5u', { x5u: 'https://attacker.example/cert.pem' }],
      ['jwk', { jwk: attackerJwk }],
      ['kid', { kid: '../../../../dev/null' }],
    ];
    for (const [name, extra] of cases) {
      t.test(`a valid HS256 token with a ${name} header is accepted (the header is ignored)`, async (t) => {
        const sub = `hs-header-${name}`;
        await expectAccepted(t, app, await getUser(app, bearer(hs256(payloadFor(sub), TEST_SECRET, extra))), sub);
        accepted.push(sub);
      });
    }
    t.test('an RS256 token signed by the key embedded in its own jwk header is rejected', async (t) => {
      const token = asymmetricToken(
        { alg: 'RS256', typ: 'JWT', kid: 'evil', jwk: attackerJwk },
        payloadFor('hs-embedded-jwk'),
        attacker.privateKey,
      );
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-embedded-jwk',
        token,
      });
    });
    t.test('an HS256 token signed with the embedded jwk (as JSON text) is rejected', async (t) => {
      const jwk = { kty: 'oct', k: Buffer.from('attacker-chosen').toString('base64url') };
      const token = hs256(payloadFor('hs-embedded-oct'), 'attacker-chosen', { jwk });
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-embedded-oct',
        token,
      });
    });
  });

  t.test('the algorithm is pinned to HS256', async (t) => {
    for (const [alg, hash] of [
      ['HS384', 'sha384'],
      ['HS512', 'sha512'],
    ] as const) {
      t.test(`${alg} with the right secret is rejected`, async (t) => {
        const token = hmacToken({ alg, typ: 'JWT' }, payloadFor(`hs-${alg}`), TEST_SECRET, hash);
        await expectRejected(t, app, await getUser(app, bearer(token)), {
          code: 'invalid_token',
          sub: `hs-${alg}`,
          token,
        });
      });
    }
    t.test('HS384 signed by fast-jwt with the right secret is rejected', async (t) => {
      const token = createSigner({ key: TEST_SECRET, algorithm: 'HS384', expiresIn: 3600_000 })({
        sub: 'hs-lib-HS384',
      });
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-lib-HS384',
        token,
      });
    });
    t.test('an RS256 token is rejected under a secret configuration', async (t) => {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const token = libraryToken('RS256', privateKey, payloadFor('hs-rs256'));
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-rs256',
        token,
      });
    });
    t.test('alg "hs256" (wrong case) is rejected', async (t) => {
      const token = hmacToken({ alg: 'hs256', typ: 'JWT' }, payloadFor('hs-lower-alg'), TEST_SECRET);
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'hs-lower-alg',
        token,
      });
    });
  });

  t.test('401 responses leak neither the token nor library internals', async (t) => {
    const tokens = [
      hs256(payloadFor('hs-leak', { exp: now() - 3600 })),
      hs256(payloadFor('hs-leak'), 'wrong-secret'),
      hs256(payloadFor('hs-leak', { exp: '9999999999' })),
      hs256(payloadFor('hs-leak'), TEST_SECRET, { crit: ['exp'] }),
      hmacToken({ alg: 'HS512' }, payloadFor('hs-leak'), TEST_SECRET, 'sha512'),
      `${b64({ alg: 'HS256' })}.${b64(payloadFor('hs-leak'))}.`,
    ];
    for (const token of tokens) {
      const res = await getUser(app, bearer(token));
      t.equal(res.statusCode, 401);
      for (const text of [res.body, String(res.headers['www-authenticate'])]) {
        t.notOk(text.includes(token), 'token absent');
        for (const segment of token.split('.').filter(Boolean)) t.notOk(text.includes(segment), 'no token segment');
        t.notMatch(text, /FAST_JWT|FST_|stack|\bat \S+ \(/i);
      }
    }
    t.equal(await app.users.findById('hs-leak'), undefined);
  });

  t.test('only the accepted subjects have users rows', async (t) => {
    t.same(await userIds(app), [...accepted].sort());
  });
});

// ---------------------------------------------------------------------------------------------
// Issuer and audience
// ---------------------------------------------------------------------------------------------

t.test('AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE are enforced when configured', async (t) => {
  const iss = 'https://idp.example.com/realms/pack';
  const aud = 'pack-service';
  const app = await buildTestApp(t, { AUTH_JWT_ISSUER: iss, AUTH_JWT_AUDIENCE: aud });

  // fast-jwt's allowedIss/allowedAud check a claim only when it is present: the configured ones
  // are also required claims, so a token without them is invalid.
  const rejected: Array<[string, Claims]> = [
    ['missing iss', { aud }],
    ['wrong iss', { iss: 'https://evil.example.com/realms/pack', aud }],
    ['iss with a suffix', { iss: `${iss}.evil`, aud }],
    ['iss with a trailing slash', { iss: `${iss}/`, aud }],
    ['iss as an array containing the issuer', { iss: [iss], aud }],
    ['missing aud', { iss }],
    ['missing iss and aud', {}],
    ['iss null', { iss: null, aud }],
    ['aud null', { iss, aud: null }],
    ['wrong aud', { iss, aud: 'other-service' }],
    ['aud array without the audience', { iss, aud: ['other-service', 'pack-service-2'] }],
    ['an empty aud array', { iss, aud: [] }],
    ['aud with a prefix', { iss, aud: `x${aud}` }],
  ];
  for (const [name, claims] of rejected) {
    t.test(`${name} is rejected`, async (t) => {
      const sub = `iss-${name.replace(/\W+/g, '-')}`;
      const token = tokenFor(sub, claims);
      await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub, token });
    });
  }
  t.test('a token without iss or aud, hand-built with a valid signature, is rejected', async (t) => {
    const token = hs256(payloadFor('iss-hand-built'));
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'iss-hand-built',
      token,
    });
  });
  t.test('the right iss and aud are accepted', async (t) => {
    await expectAccepted(t, app, await getUser(app, bearer(tokenFor('iss-ok', { iss, aud }))), 'iss-ok');
  });
  t.test('an aud array containing the audience is accepted', async (t) => {
    await expectAccepted(
      t,
      app,
      await getUser(app, bearer(tokenFor('iss-ok-array', { iss, aud: ['account', aud] }))),
      'iss-ok-array',
    );
  });
  t.test('the right iss and aud with an expired exp is still token_expired', async (t) => {
    const token = hs256(payloadFor('iss-expired', { iss, aud, exp: now() - 3600 }));
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'token_expired',
      sub: 'iss-expired',
      token,
    });
  });
});

t.test('only the configured claim is required: AUTH_JWT_ISSUER alone, then AUTH_JWT_AUDIENCE alone', async (t) => {
  const iss = 'https://idp.example.com/realms/pack';
  const aud = 'pack-service';
  t.test('AUTH_JWT_ISSUER alone: iss is required, aud is not', async (t) => {
    const app = await buildTestApp(t, { AUTH_JWT_ISSUER: iss });
    await expectAccepted(t, app, await getUser(app, bearer(tokenFor('only-iss-ok', { iss }))), 'only-iss-ok');
    await expectAccepted(
      t,
      app,
      await getUser(app, bearer(tokenFor('only-iss-any-aud', { iss, aud: 'anything' }))),
      'only-iss-any-aud',
    );
    const token = tokenFor('only-iss-missing', { aud });
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'only-iss-missing',
      token,
    });
  });
  t.test('AUTH_JWT_AUDIENCE alone: aud is required, iss is not', async (t) => {
    const app = await buildTestApp(t, { AUTH_JWT_AUDIENCE: aud });
    await expectAccepted(t, app, await getUser(app, bearer(tokenFor('only-aud-ok', { aud }))), 'only-aud-ok');
    await expectAccepted(
      t,
      app,
      await getUser(app, bearer(tokenFor('only-aud-any-iss', { aud, iss: 'https://other.example' }))),
      'only-aud-any-iss',
    );
    const token = tokenFor('only-aud-missing', { iss });
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'only-aud-missing',
      token,
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Public keys (PEM)
// ---------------------------------------------------------------------------------------------

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const rsaDer = rsa.publicKey.export({ type: 'spki', format: 'der' });
const rsaPkcs1Pem = rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();

/** Key-confusion tokens: HS256 "signed" with the public key material as the HMAC secret. */
function confusionTokens(sub: string, pem: string, der: Buffer): Array<[string, string]> {
  return [
    ['the PEM text', hs256(payloadFor(sub), pem)],
    ['the PEM text without its final newline', hs256(payloadFor(sub), pem.trimEnd())],
    ['the PEM text with leading newlines and spaces', hs256(payloadFor(sub), `\n\n  ${pem}`)],
    ['the PEM text with CRLF line ends', hs256(payloadFor(sub), pem.replace(/\n/g, '\r\n'))],
    ['the DER bytes', hs256(payloadFor(sub), der)],
    ['the base64 body of the PEM', hs256(payloadFor(sub), der.toString('base64'))],
  ];
}

t.test('RS256 with AUTH_JWT_PUBLIC_KEY', async (t) => {
  const app = await buildTestApp(t, { AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: rsaPem });

  t.test('a valid RS256 token (fast-jwt) is accepted', async (t) => {
    await expectAccepted(
      t,
      app,
      await getUser(app, bearer(libraryToken('RS256', rsa.privateKey, payloadFor('rs-ok')))),
      'rs-ok',
    );
  });
  t.test('a valid hand-built RS256 token is accepted', async (t) => {
    const token = asymmetricToken({ alg: 'RS256', typ: 'JWT' }, payloadFor('rs-ok-2'), rsa.privateKey);
    await expectAccepted(t, app, await getUser(app, bearer(token)), 'rs-ok-2');
  });
  for (const [name, token] of [
    ...confusionTokens('rs-confusion', rsaPem, rsaDer),
    ['the PKCS#1 PEM text', hs256(payloadFor('rs-confusion'), rsaPkcs1Pem)],
  ] as Array<[string, string]>) {
    t.test(`key confusion: HS256 signed with ${name} is rejected`, async (t) => {
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'rs-confusion',
        token,
      });
    });
  }
  t.test('RS256 signed by another RSA key is rejected', async (t) => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const token = libraryToken('RS256', other.privateKey, payloadFor('rs-other-key'));
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'rs-other-key',
      token,
    });
  });
  t.test('RS256 signed by the key embedded in its own jwk header is rejected', async (t) => {
    const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...attacker.publicKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' };
    const token = asymmetricToken(
      { alg: 'RS256', typ: 'JWT', jwk },
      payloadFor('rs-embedded-jwk'),
      attacker.privateKey,
    );
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'rs-embedded-jwk',
      token,
    });
  });
  t.test('RS512 and PS256 signed with the right key are rejected (pinned to RS256)', async (t) => {
    for (const alg of ['RS512', 'PS256']) {
      const token = asymmetricToken({ alg, typ: 'JWT' }, payloadFor(`rs-${alg}`), rsa.privateKey);
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: `rs-${alg}`,
        token,
      });
    }
  });
  t.test('an expired RS256 token is token_expired', async (t) => {
    const token = libraryToken('RS256', rsa.privateKey, payloadFor('rs-expired', { exp: now() - 3600 }));
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'token_expired',
      sub: 'rs-expired',
      token,
    });
  });
  t.test('an RS256 token without sub is rejected', async (t) => {
    const token = libraryToken('RS256', rsa.privateKey, payloadFor(undefined, { name: 'x' }));
    await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', token });
  });
});

t.test('a PEM configured with leading whitespace still verifies RS256 and still refuses key confusion', async (t) => {
  const configured = `\n\n   ${rsaPem}`;
  const app = await buildTestApp(t, { AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: configured });
  await expectAccepted(
    t,
    app,
    await getUser(app, bearer(libraryToken('RS256', rsa.privateKey, payloadFor('ws-ok')))),
    'ws-ok',
  );
  for (const [name, token] of [
    ['the configured text', hs256(payloadFor('ws-confusion'), configured)],
    ...confusionTokens('ws-confusion', rsaPem, rsaDer),
  ] as Array<[string, string]>) {
    t.test(`HS256 signed with ${name} is rejected`, async (t) => {
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'ws-confusion',
        token,
      });
    });
  }
});

t.test('a PEM configured with literal \\n escapes verifies RS256 and refuses key confusion', async (t) => {
  const configured = rsaPem.trimEnd().replace(/\n/g, '\\n');
  const app = await buildTestApp(t, { AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: configured });
  await expectAccepted(
    t,
    app,
    await getUser(app, bearer(libraryToken('RS256', rsa.privateKey, payloadFor('esc-ok')))),
    'esc-ok',
  );
  const token = hs256(payloadFor('esc-confusion'), configured);
  await expectRejected(t, app, await getUser(app, bearer(token)), {
    code: 'invalid_token',
    sub: 'esc-confusion',
    token,
  });
});

t.test('ES256 with an EC P-256 PEM', async (t) => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ecPem = ec.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const ecDer = ec.publicKey.export({ type: 'spki', format: 'der' });
  const app = await buildTestApp(t, { AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: ecPem });

  t.test('a valid ES256 token (fast-jwt) is accepted', async (t) => {
    await expectAccepted(
      t,
      app,
      await getUser(app, bearer(libraryToken('ES256', ec.privateKey, payloadFor('es-ok')))),
      'es-ok',
    );
  });
  t.test('a valid hand-built ES256 token is accepted', async (t) => {
    const token = asymmetricToken({ alg: 'ES256', typ: 'JWT' }, payloadFor('es-ok-2'), ec.privateKey);
    await expectAccepted(t, app, await getUser(app, bearer(token)), 'es-ok-2');
  });
  t.test('an RS256 token is rejected', async (t) => {
    const token = libraryToken('RS256', rsa.privateKey, payloadFor('es-rs256'));
    await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub: 'es-rs256', token });
  });
  t.test('an ES256 token signed by another P-256 key is rejected', async (t) => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const token = libraryToken('ES256', other.privateKey, payloadFor('es-other'));
    await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub: 'es-other', token });
  });
  t.test('an ES384 header over an ES256 key is rejected', async (t) => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const token = asymmetricToken({ alg: 'ES384', typ: 'JWT' }, payloadFor('es-384'), p384.privateKey);
    await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub: 'es-384', token });
  });
  for (const [name, token] of confusionTokens('es-confusion', ecPem, ecDer)) {
    t.test(`key confusion: HS256 signed with ${name} is rejected`, async (t) => {
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'es-confusion',
        token,
      });
    });
  }
});

t.test('EdDSA with an Ed25519 PEM', async (t) => {
  const ed = generateKeyPairSync('ed25519');
  const edPem = ed.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const edDer = ed.publicKey.export({ type: 'spki', format: 'der' });
  const app = await buildTestApp(t, { AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: edPem });

  t.test('a valid EdDSA token (fast-jwt) is accepted', async (t) => {
    await expectAccepted(
      t,
      app,
      await getUser(app, bearer(libraryToken('EdDSA', ed.privateKey, payloadFor('ed-ok')))),
      'ed-ok',
    );
  });
  t.test('an EdDSA token signed by another Ed25519 key is rejected', async (t) => {
    const other = generateKeyPairSync('ed25519');
    const token = asymmetricToken({ alg: 'EdDSA', typ: 'JWT' }, payloadFor('ed-other'), other.privateKey);
    await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub: 'ed-other', token });
  });
  t.test('an RS256 token is rejected', async (t) => {
    const token = libraryToken('RS256', rsa.privateKey, payloadFor('ed-rs256'));
    await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub: 'ed-rs256', token });
  });
  for (const [name, token] of confusionTokens('ed-confusion', edPem, edDer)) {
    t.test(`key confusion: HS256 signed with ${name} is rejected`, async (t) => {
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'ed-confusion',
        token,
      });
    });
  }
});

// ---------------------------------------------------------------------------------------------
// JWKS
// ---------------------------------------------------------------------------------------------

interface JwksServer {
  server: Server;
  origin: string;
  url: string;
  requests: string[];
  close(): Promise<void>;
}

/** A local JWKS endpoint on 127.0.0.1, counting every request it receives. */
async function startJwksServer(keys: object[]): Promise<JwksServer> {
  const requests: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.url === '/.well-known/jwks.json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    server,
    origin,
    url: `${origin}/.well-known/jwks.json`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** A public key as an identity provider publishes it in its JWKS. */
const publicJwk = (key: KeyObject, kid: string, alg: string) => ({
  ...key.export({ format: 'jwk' }),
  kid,
  alg,
  use: 'sig',
});

/** Longer than the 200 ms lookup interval of the refill test: a wait this long refills at least one lookup. */
const BUCKET_REFILL_WAIT_MS = 500;

/** A provider whose JWKS publishes `signing` as key-1; `rotated` is a key it may publish later, `attacker` one it never will. */
async function keyRotationStand(t: Test) {
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rotated = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
  // The array is served by reference: pushing a key later is a key rotation at the provider.
  const publishedKeys: object[] = [publicJwk(signing.publicKey, 'key-1', 'RS256')];
  const jwks = await startJwksServer(publishedKeys);
  t.teardown(jwks.close);
  return { signing, rotated, attacker, publishedKeys, jwks };
}

t.test('JWKS with AUTH_JWKS_URL', async (t) => {
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ecSigning = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rotated = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicJwk;

  // The array is served by reference: pushing a key later is a key rotation at the provider.
  const publishedKeys: object[] = [jwk(signing.publicKey, 'key-1', 'RS256'), jwk(ecSigning.publicKey, 'ec-1', 'ES256')];
  const jwks = await startJwksServer(publishedKeys);
  const evil = await startJwksServer([
    jwk(attacker.publicKey, 'evil-1', 'RS256'),
    jwk(attacker.publicKey, 'key-1', 'RS256'),
  ]);
  t.teardown(() => Promise.all([jwks.close(), evil.close()]));

  // This group looks up 9 distinct new key ids, within the bucket of 10: no test here waits.
  const app = await buildTestApp(t, { AUTH_JWT_SECRET: '', AUTH_JWKS_URL: jwks.url });
  const signingPem = signing.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const signingDer = signing.publicKey.export({ type: 'spki', format: 'der' });
  const accepted: string[] = [];

  t.test('RS256 with the right kid is accepted, fetched from the configured URL', async (t) => {
    const token = libraryToken('RS256', signing.privateKey, payloadFor('jwks-ok'), 'key-1');
    await expectAccepted(t, app, await getUser(app, bearer(token)), 'jwks-ok');
    accepted.push('jwks-ok');
    t.equal(jwks.requests.length, 1, 'one fetch');
    t.same([...new Set(jwks.requests)], ['GET /.well-known/jwks.json'], 'only the configured path');
  });
  t.test('a cached kid is not fetched again', async (t) => {
    const before = jwks.requests.length;
    const token = libraryToken('RS256', signing.privateKey, payloadFor('jwks-ok'), 'key-1');
    t.equal((await getUser(app, bearer(token))).statusCode, 200);
    t.equal(jwks.requests.length, before);
  });
  t.test('ES256 with its kid is accepted at once, right after another new kid (one fetch)', async (t) => {
    const before = jwks.requests.length;
    const token = libraryToken('ES256', ecSigning.privateKey, payloadFor('jwks-ec-ok'), 'ec-1');
    await expectAccepted(t, app, await getUser(app, bearer(token)), 'jwks-ec-ok');
    accepted.push('jwks-ec-ok');
    t.equal(jwks.requests.length, before + 1, 'one fetch');
  });
  t.test('an unknown kid is rejected after exactly one lookup', async (t) => {
    const before = jwks.requests.length;
    const token = libraryToken('RS256', signing.privateKey, payloadFor('jwks-unknown-kid'), 'key-404');
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'jwks-unknown-kid',
      token,
    });
    t.equal(jwks.requests.length, before + 1, 'one fetch');
  });
  t.test('the same unknown kid again is rejected from memory, without a fetch', async (t) => {
    const before = jwks.requests.length;
    const token = libraryToken('RS256', signing.privateKey, payloadFor('jwks-unknown-kid'), 'key-404');
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'jwks-unknown-kid',
      token,
    });
    t.equal(jwks.requests.length, before, 'no fetch');
  });
  t.test('no kid is rejected', async (t) => {
    const token = libraryToken('RS256', signing.privateKey, payloadFor('jwks-no-kid'));
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'jwks-no-kid',
      token,
    });
  });
  t.test('a kid whose key is for another algorithm is rejected', async (t) => {
    const token = asymmetricToken(
      { alg: 'ES256', typ: 'JWT', kid: 'key-1' },
      payloadFor('jwks-alg-mismatch'),
      ecSigning.privateKey,
    );
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'jwks-alg-mismatch',
      token,
    });
  });
  t.test('the right kid with another key signing is rejected', async (t) => {
    const token = libraryToken('RS256', attacker.privateKey, payloadFor('jwks-wrong-key'), 'key-1');
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'jwks-wrong-key',
      token,
    });
  });
  t.test('an expired token with the right kid is token_expired', async (t) => {
    const token = libraryToken('RS256', signing.privateKey, payloadFor('jwks-expired', { exp: now() - 3600 }), 'key-1');
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'token_expired',
      sub: 'jwks-expired',
      token,
    });
  });
  for (const [name, token] of confusionTokens('jwks-confusion', signingPem, signingDer)) {
    t.test(`HS256 signed with the JWKS key's ${name.replace(/^the /, '')} is rejected`, async (t) => {
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'jwks-confusion',
        token,
      });
    });
  }
  t.test('HS256 with a kid of the JWKS, signed with the PEM, is rejected', async (t) => {
    const token = hs256(payloadFor('jwks-confusion-kid'), signingPem, { kid: 'key-1' });
    await expectRejected(t, app, await getUser(app, bearer(token)), {
      code: 'invalid_token',
      sub: 'jwks-confusion-kid',
      token,
    });
  });

  t.test('tokens that name another JWKS server never make the service ask it', async (t) => {
    const cases: Array<[string, string]> = [
      [
        'iss names the attacker',
        libraryToken('RS256', attacker.privateKey, payloadFor('jwks-evil-iss', { iss: evil.origin }), 'evil-1'),
      ],
      [
        'iss names the attacker with the real kid',
        libraryToken('RS256', attacker.privateKey, payloadFor('jwks-evil-iss', { iss: `${evil.origin}/` }), 'key-1'),
      ],
      [
        'jku names the attacker JWKS',
        asymmetricToken(
          { alg: 'RS256', typ: 'JWT', kid: 'evil-1', jku: evil.url },
          payloadFor('jwks-evil-jku'),
          attacker.privateKey,
        ),
      ],
      [
        'jku names the attacker JWKS with the real kid',
        asymmetricToken(
          { alg: 'RS256', typ: 'JWT', kid: 'key-1', jku: evil.url },
          payloadFor('jwks-evil-jku'),
          attacker.privateKey,
        ),
      ],
      [
        'x5u names the attacker',
        asymmetricToken(
          { alg: 'RS256', typ: 'JWT', kid: 'evil-1', x5u: `${evil.origin}/cert.pem` },
          payloadFor('jwks-evil-x5u'),
          attacker.privateKey,
        ),
      ],
      [
        'the attacker key embedded as jwk',
        asymmetricToken(
          { alg: 'RS256', typ: 'JWT', kid: 'evil-1', jwk: jwk(attacker.publicKey, 'evil-1', 'RS256') },
          payloadFor('jwks-evil-jwk'),
          attacker.privateKey,
        ),
      ],
    ];
    for (const [name, token] of cases) {
      const sub = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).sub as string;
      t.test(name, async (t) => {
        await expectRejected(t, app, await getUser(app, bearer(token)), { code: 'invalid_token', sub, token });
      });
    }
    t.test('every lookup went to the configured URL', async (t) => {
      t.same([...new Set(jwks.requests)], ['GET /.well-known/jwks.json']);
    });
    t.test('the attacker server received zero requests', async (t) => {
      t.same(evil.requests, []);
    });
  });

  t.test('the same forged kid sent 5 times in a row causes exactly one fetch', async (t) => {
    const before = jwks.requests.length;
    for (let attempt = 0; attempt < 5; attempt++) {
      const token = libraryToken(
        'RS256',
        attacker.privateKey,
        payloadFor('jwks-forged-repeat', { attempt }),
        'forged-repeat',
      );
      await expectRejected(t, app, await getUser(app, bearer(token)), {
        code: 'invalid_token',
        sub: 'jwks-forged-repeat',
        token,
      });
    }
    t.equal(jwks.requests.length, before + 1, 'one fetch for five requests');
  });
  t.test('5 concurrent requests with one new forged kid share one fetch', async (t) => {
    const before = jwks.requests.length;
    const token = libraryToken('RS256', attacker.privateKey, payloadFor('jwks-forged-burst'), 'forged-burst');
    const responses = await Promise.all(Array.from({ length: 5 }, () => getUser(app, bearer(token))));
    for (const res of responses) {
      await expectRejected(t, app, res, { code: 'invalid_token', sub: 'jwks-forged-burst', token });
    }
    t.equal(jwks.requests.length, before + 1, 'one fetch for five concurrent requests');
  });

  t.test('a key published after startup (a rotation) is accepted on its first use', async (t) => {
    publishedKeys.push(jwk(rotated.publicKey, 'key-2', 'RS256'));
    const before = jwks.requests.length;
    const valid = libraryToken('RS256', rotated.privateKey, payloadFor('jwks-rotated'), 'key-2');
    await expectAccepted(t, app, await getUser(app, bearer(valid)), 'jwks-rotated');
    accepted.push('jwks-rotated');
    t.equal(jwks.requests.length, before + 1, 'one fetch');
    t.equal((await getUser(app, bearer(valid))).statusCode, 200, 'and again, from the cache');
    t.equal(jwks.requests.length, before + 1, 'no second fetch');
  });

  t.test('only the accepted subjects have users rows', async (t) => {
    t.same(await userIds(app), [...accepted].sort());
  });

  t.test('both JWKS servers are closed at the end', async (t) => {
    await Promise.all([jwks.close(), evil.close()]);
    t.equal(jwks.server.listening, false);
    t.equal(evil.server.listening, false);
    // A raw connection (not fetch, whose pool may hold a socket the server just destroyed).
    const port = Number(new URL(jwks.url).port);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'failed'));
    });
    t.equal(refused, 'ECONNREFUSED');
  });
});

t.test(
  'JWKS lookups of new key ids: misses remembered, a bucket of 10 refilling one per interval, then 503',
  async (t) => {
    const { signing, rotated, attacker, publishedKeys, jwks } = await keyRotationStand(t);

    const valid = libraryToken('RS256', signing.privateKey, payloadFor('bucket-ok'), 'key-1');
    const newKeyToken = libraryToken('RS256', rotated.privateKey, payloadFor('bucket-new-key'), 'key-2');
    const forged = Array.from({ length: 14 }, (_, index) =>
      asymmetricToken(
        { alg: 'RS256', typ: 'JWT', kid: `forged-${index}` },
        payloadFor('bucket-forged'),
        attacker.privateKey,
      ),
    );
    // One lookup regained per hour: however slow this machine, the bucket does not refill mid-test.
    const app = await buildTestApp(t, {
      AUTH_JWT_SECRET: '',
      AUTH_JWKS_URL: jwks.url,
      AUTH_JWKS_LOOKUP_INTERVAL: '1 hour',
    });

    t.test('a valid token takes the first of the 10 lookups', async (t) => {
      await expectAccepted(t, app, await getUser(app, bearer(valid)), 'bucket-ok');
      t.equal(jwks.requests.length, 1, 'one fetch');
    });

    t.test(
      '14 distinct forged key ids in a row: 9 are 401 after one fetch each, then 503 with Retry-After one interval',
      async (t) => {
        const results: Array<{ res: LightMyRequestResponse; fetches: number }> = [];
        for (const token of forged) {
          const before = jwks.requests.length;
          const res = await getUser(app, bearer(token));
          results.push({ res, fetches: jwks.requests.length - before });
        }
        const statuses = results.map(({ res }) => res.statusCode);
        t.same(
          statuses,
          [...Array<number>(9).fill(401), ...Array<number>(5).fill(503)],
          `statuses ${statuses.join(', ')}`,
        );
        for (const [index, { res, fetches }] of results.entries()) {
          const token = forged[index] ?? '';
          if (index < 9) {
            await expectRejected(t, app, res, { code: 'invalid_token', sub: 'bucket-forged', token });
            t.equal(fetches, 1, `forged-${index}: one fetch`);
          } else {
            await expectUnavailable(t, app, res, { retryAfter: '3600', sub: 'bucket-forged', token });
            t.equal(fetches, 0, `forged-${index}: no fetch`);
          }
        }
        t.equal(jwks.requests.length, 10, '10 fetches in all: the valid key id and 9 forged ones');
      },
    );

    t.test('while the bucket is empty', async (t) => {
      t.test('a cached key id is still accepted, without a fetch', async (t) => {
        const before = jwks.requests.length;
        await expectAccepted(t, app, await getUser(app, bearer(valid)), 'bucket-ok');
        t.equal(jwks.requests.length, before);
      });
      t.test('a forged key id already found missing is 401 from memory (not 503), without a fetch', async (t) => {
        const before = jwks.requests.length;
        const token = forged[0] ?? '';
        await expectRejected(t, app, await getUser(app, bearer(token)), {
          code: 'invalid_token',
          sub: 'bucket-forged',
          token,
        });
        t.equal(jwks.requests.length, before);
      });
      t.test('a forged key id answered 503 is still 503 on an immediate repeat (it was never looked up)', async (t) => {
        const before = jwks.requests.length;
        const token = forged[9] ?? '';
        await expectUnavailable(t, app, await getUser(app, bearer(token)), {
          retryAfter: '3600',
          sub: 'bucket-forged',
          token,
        });
        t.equal(jwks.requests.length, before);
      });
      t.test('a valid token with a newly published key id is 503 with Retry-After, never 401', async (t) => {
        publishedKeys.push(publicJwk(rotated.publicKey, 'key-2', 'RS256'));
        const before = jwks.requests.length;
        await expectUnavailable(t, app, await getUser(app, bearer(newKeyToken)), {
          retryAfter: '3600',
          sub: 'bucket-new-key',
          token: newKeyToken,
        });
        t.equal(jwks.requests.length, before, 'no fetch');
      });
      t.test('missing and malformed credentials are still 401', async (t) => {
        await expectRejected(t, app, await getUser(app), { code: 'missing_credentials' });
        await expectRejected(t, app, await getUser(app, withAuth('Bearer abc.def')), { code: 'invalid_token' });
      });
    });

    t.test('only the valid subject has a users row', async (t) => {
      t.same(await userIds(app), ['bucket-ok']);
    });
  },
);

t.test(
  'once the bucket has refilled, a retried valid token is accepted while the attacker repeats its key ids',
  async (t) => {
    const { rotated, attacker, publishedKeys, jwks } = await keyRotationStand(t);
    const forged = Array.from({ length: 12 }, (_, index) =>
      asymmetricToken(
        { alg: 'RS256', typ: 'JWT', kid: `forged-${index}` },
        payloadFor('refill-forged'),
        attacker.privateKey,
      ),
    );
    const newKeyToken = libraryToken('RS256', rotated.privateKey, payloadFor('refill-new-key'), 'key-2');
    // A short interval: waiting longer than it can only refill, so what follows holds on any machine.
    const app = await buildTestApp(t, {
      AUTH_JWT_SECRET: '',
      AUTH_JWKS_URL: jwks.url,
      AUTH_JWKS_LOOKUP_INTERVAL: '200 ms',
    });
    for (const token of forged) await getUser(app, bearer(token));
    publishedKeys.push(publicJwk(rotated.publicKey, 'key-2', 'RS256'));
    await sleep(BUCKET_REFILL_WAIT_MS);
    // The first ten were looked up and found missing: remembered for 30 s.
    const found = forged.slice(0, 5);
    const before = jwks.requests.length;
    for (const token of found)
      t.equal((await getUser(app, bearer(token))).statusCode, 401, 'a forged key id is still 401');
    await expectAccepted(t, app, await getUser(app, bearer(newKeyToken)), 'refill-new-key');
    t.ok(jwks.requests.length >= before + 1, 'the new key id was looked up');
    t.same(await userIds(app), ['refill-new-key'], 'no row for the forged subjects');
  },
);

t.test('JWKS server down: 503 auth_unavailable, not 401 and not 500', async (t) => {
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = await startJwksServer([publicJwk(signing.publicKey, 'key-1', 'RS256')]);
  t.teardown(jwks.close);
  await jwks.close();
  t.equal(jwks.server.listening, false, 'the JWKS server is closed before the app starts');

  // A fresh app: nothing can have been cached, and the bucket holds 10 lookups.
  const token = libraryToken('RS256', signing.privateKey, payloadFor('jwks-down'), 'key-1');
  const app = await buildTestApp(t, {
    AUTH_JWT_SECRET: '',
    AUTH_JWKS_URL: jwks.url,
    AUTH_JWKS_LOOKUP_INTERVAL: '1 hour',
  });
  const expected = { sub: 'jwks-down', token };

  t.test('a valid token is 503 auth_unavailable with retry-after 30', async (t) => {
    await expectUnavailable(t, app, await getUser(app, bearer(token)), { ...expected, retryAfter: '30' });
    t.same(jwks.requests, [], 'nothing answered');
  });
  t.test('an immediate retry of the same token during the outage is still 503 retry-after 30, never 401', async (t) => {
    await expectUnavailable(t, app, await getUser(app, bearer(token)), { ...expected, retryAfter: '30' });
  });
  t.test(
    'further retries are 503 retry-after 30 while lookups remain, then 503 with Retry-After one lookup interval',
    async (t) => {
      // Two of the 10 lookups are spent above.
      const retryAfters: string[] = [];
      for (let attempt = 0; attempt < 10; attempt++) {
        const res = await getUser(app, bearer(token));
        const retryAfter = attempt < 8 ? '30' : '3600';
        await expectUnavailable(t, app, res, { ...expected, retryAfter });
        retryAfters.push(String(res.headers['retry-after']));
      }
      t.same(retryAfters, [...Array<string>(8).fill('30'), '3600', '3600']);
    },
  );
  t.test('malformed and missing credentials are still 401 without a fetch', async (t) => {
    await expectRejected(t, app, await getUser(app, withAuth('Bearer abc.def')), { code: 'invalid_token' });
    await expectRejected(t, app, await getUser(app), { code: 'missing_credentials' });
  });
});
