import {
  constants,
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomUUID,
  sign as cryptoSign,
} from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import t from 'tap';
import type { App } from '../../../../app.js';
import { users } from '../../../../db/schema.js';
import { generateSigningKeyPem } from '../../../../plugins/app/sessions/keys.js';
import { nonceClaim, type StandInProvider } from '../../../../scripts/stand-in-provider.js';
import { createTestDatabase, TEST_SECRET, TEST_SESSION_KEY, tokenFor } from '../../../support/app.js';
import { b64, type Claims, type ErrorBody, hmacToken, now, type Test } from '../../../support/jwt.js';
import {
  buildSessionApp,
  mobileSignIn,
  newNonce,
  type Providers,
  signInWith,
  startProviders,
  whoAmI,
} from '../../../support/sessions.js';

/**
 * The JWT attacks of jwt.test.ts against every issuer the service trusts, through the real app:
 * - our own session access tokens (EdDSA, kid = RFC 7638 thumbprint, iss = aud = our URL) as
 *   bearer tokens on GET /api/user, forged every way jwt.test.ts forges the external issuer's;
 * - the external HS256 issuer beside them, and the `iss` that routes a token to a verifier;
 * - Apple and Google ID tokens at POST /api/auth/mobile/token, where every refusal is the same
 *   401 and creates no user;
 * - session key rotation: tokens of the previous key verify until they expire.
 */

/** DEV_BASE_URL's default: the `iss` and `aud` of our tokens in tests. */
const OUR_ISSUER = 'http://localhost:3000';
const ID_TOKEN_REFUSED = 'The ID token could not be verified.';
/** Many refusals from one address in a few seconds: the sign-in limits must not be what answers. */
const LIMITS = { AUTH_RATE_LIMIT_IP: '100000', AUTH_RATE_LIMIT_SUBJECT: '100000' };

function dropUndefined(object: Claims): Claims {
  const copy: Claims = { ...object };
  for (const key of Object.keys(copy)) if (copy[key] === undefined) delete copy[key];
  return copy;
}

/** One segment of a compact JWS, decoded (0: header, 1: payload). */
function segment(token: string, index: 0 | 1): Claims {
  return JSON.parse(Buffer.from(token.split('.')[index] ?? '', 'base64url').toString('utf8')) as Claims;
}

/**
 * A hand-built asymmetric token. The signature follows the key (Ed25519, P-256 in IEEE P1363 form,
 * RSA PKCS#1 v1.5 or PSS when the header says PS256), whatever the header's `alg` claims, so a
 * header can lie about the algorithm. Header members or claims of undefined are dropped.
 */
function signedToken(header: Claims, payload: Claims, key: KeyObject): string {
  const input = Buffer.from(`${b64(dropUndefined(header))}.${b64(dropUndefined(payload))}`);
  let signature: Buffer;
  if (key.asymmetricKeyType === 'ed25519') signature = cryptoSign(null, input, key);
  else if (key.asymmetricKeyType === 'ec') signature = cryptoSign('sha256', input, { key, dsaEncoding: 'ieee-p1363' });
  else if (header.alg === 'PS256')
    signature = cryptoSign('sha256', input, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
  else signature = cryptoSign('sha256', input, key);
  return `${input.toString()}.${signature.toString('base64url')}`;
}

/** RFC 7638, computed here rather than by the code under test. */
function jwkThumbprint(jwk: Claims): string {
  const members =
    jwk.kty === 'EC'
      ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
      : jwk.kty === 'RSA'
        ? { e: jwk.e, kty: jwk.kty, n: jwk.n }
        : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

function kidOf(pem: string): string {
  return jwkThumbprint(createPublicKey(pem).export({ format: 'jwk' }) as Claims);
}

/** HS256 tokens keyed with the forms a public key is published in (key confusion). */
function confusionKeys(publicKey: KeyObject): Array<[string, string | Buffer]> {
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const der = publicKey.export({ type: 'spki', format: 'der' });
  const keys: Array<[string, string | Buffer]> = [
    ['the PEM text', pem],
    ['the PEM text without its final newline', pem.trimEnd()],
    ['the PEM text with CRLF line ends', pem.replace(/\n/g, '\r\n')],
    ['the DER bytes', der],
    ['the base64 body of the PEM', der.toString('base64')],
  ];
  const jwk = publicKey.export({ format: 'jwk' }) as Claims;
  if (typeof jwk.x === 'string') {
    keys.push(['the JWK x member (text)', jwk.x], ['the raw public key bytes', Buffer.from(jwk.x, 'base64url')]);
  }
  return keys;
}

const userCount = async (app: App) => (await app.db.orm.select({ id: users.id }).from(users)).length;

/**
 * The one shape every rejection of a bearer token must have: 401, the error envelope with the
 * request id, a Bearer challenge, nothing leaked, and no users row for the subject.
 */
async function expectRejected(
  t: Test,
  app: App,
  res: LightMyRequestResponse,
  expected: { code: 'invalid_token' | 'token_expired'; sub?: string; token?: string },
) {
  t.equal(res.statusCode, 401, `status 401 (got ${res.statusCode})`);
  const body = res.json<Partial<ErrorBody>>();
  t.equal(body.success, false, 'success false');
  t.equal(body.error?.code, expected.code, `code ${expected.code}`);
  t.ok(typeof body.error?.message === 'string' && body.error.message.length > 0, 'has a message');
  t.equal(body.error?.requestId, res.headers['x-request-id'], 'requestId is the x-request-id');
  t.same(Object.keys(body).sort(), ['error', 'success'], 'envelope keys');
  const challenge = String(res.headers['www-authenticate'] ?? '');
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

async function expectAcceptedAs(t: Test, res: LightMyRequestResponse, userId: string) {
  t.equal(res.statusCode, 200, `accepted (${res.statusCode === 200 ? 'ok' : res.body})`);
  if (res.statusCode === 200) t.equal(res.json().data.id, userId, 'as the token subject');
}

// ---------------------------------------------------------------------------------------------
// Our own issuer: session access tokens
// ---------------------------------------------------------------------------------------------

t.test('our own issuer: forged session access tokens as bearer tokens on GET /api/user', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers, LIMITS);
  const session = await signInWith(app, providers.google, 'issuer-owner');
  const real = session.accessToken;
  const realHeader = segment(real, 0);
  const realPayload = segment(real, 1);

  const ourKey = createPrivateKey(TEST_SESSION_KEY);
  const ourPublic = createPublicKey(ourKey);
  const ourKid = kidOf(TEST_SESSION_KEY);
  const attackerEd = generateKeyPairSync('ed25519');
  const attackerEc = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  /** The claims of one of our tokens, for `sub`, with overrides (undefined drops a claim). */
  const claimsFor = (sub: string, claims: Claims = {}): Claims => ({
    iss: OUR_ISSUER,
    aud: OUR_ISSUER,
    sub,
    sid: session.sessionId,
    jti: randomUUID(),
    iat: now(),
    exp: now() + 600,
    ...claims,
  });
  /** A token as ours are, from the real header: signed with our key unless told otherwise. */
  const forge = (sub: string, claims: Claims = {}, header: Claims = {}, key: KeyObject = ourKey) =>
    signedToken({ ...realHeader, ...header }, claimsFor(sub, claims), key);
  const usersAtStart = await userCount(app);

  t.test(
    'the real token is ours: EdDSA, kid the thumbprint of our key, iss = aud = our URL, sid and jti',
    async (t) => {
      t.equal(realHeader.alg, 'EdDSA');
      t.equal(realHeader.kid, ourKid);
      t.equal(realPayload.iss, OUR_ISSUER);
      t.equal(realPayload.aud, OUR_ISSUER);
      t.equal(realPayload.sub, session.userId);
      t.equal(realPayload.sid, session.sessionId);
      t.type(realPayload.jti, 'string');
      t.type(realPayload.iat, 'number');
      t.type(realPayload.exp, 'number');
    },
  );

  t.test('controls', async (t) => {
    t.test('the real access token is accepted', async (t) => {
      await expectAcceptedAs(t, await whoAmI(app, real), session.userId);
    });
    t.test(
      'a hand-built token with the same claims, signed with our key, is accepted (the forger is sound)',
      async (t) => {
        await expectAcceptedAs(t, await whoAmI(app, forge(session.userId)), session.userId);
      },
    );
    t.test('expired 10 s ago (within the 30 s tolerance) is accepted', async (t) => {
      await expectAcceptedAs(
        t,
        await whoAmI(app, forge(session.userId, { iat: now() - 600, exp: now() - 10 })),
        session.userId,
      );
    });
    t.test('iat 10 s ahead (within the tolerance) is accepted', async (t) => {
      await expectAcceptedAs(t, await whoAmI(app, forge(session.userId, { iat: now() + 10 })), session.userId);
    });
  });

  const cases: Array<[string, string, string, ('invalid_token' | 'token_expired')?]> = [];
  const reject = (
    name: string,
    sub: string,
    token: string,
    code: 'invalid_token' | 'token_expired' = 'invalid_token',
  ) => {
    cases.push([name, sub, token, code]);
  };

  // alg none
  {
    const payload = claimsFor('sess-alg-none');
    const input = `${b64({ ...realHeader, alg: 'none' })}.${b64(payload)}`;
    reject('alg none with an empty signature', 'sess-alg-none', `${input}.`);
    reject(
      'alg none with our real EdDSA signature of the input',
      'sess-alg-none',
      `${input}.${cryptoSign(null, Buffer.from(input), ourKey).toString('base64url')}`,
    );
    for (const alg of ['None', 'NONE'])
      reject(`alg "${alg}"`, 'sess-alg-none', `${b64({ ...realHeader, alg })}.${b64(payload)}.`);
    reject('no alg at all, signed with our key', 'sess-alg-none', forge('sess-alg-none', {}, { alg: undefined }));
    reject(
      'a valid header and claims with the signature stripped',
      'sess-alg-none',
      `${forge('sess-alg-none').split('.').slice(0, 2).join('.')}.`,
    );
  }
  // key confusion: HS256 keyed with our public key
  for (const [name, key] of confusionKeys(ourPublic)) {
    reject(
      `HS256 with our kid, keyed with ${name}`,
      'sess-confusion',
      hmacToken({ ...realHeader, alg: 'HS256' }, claimsFor('sess-confusion'), key),
    );
  }
  reject(
    'HS256 without a kid, keyed with our PEM',
    'sess-confusion',
    hmacToken(
      { alg: 'HS256', typ: 'JWT' },
      claimsFor('sess-confusion'),
      ourPublic.export({ type: 'spki', format: 'pem' }).toString(),
    ),
  );
  reject(
    'HS256 with our kid, keyed with the test secret of the external issuer',
    'sess-confusion',
    hmacToken({ ...realHeader, alg: 'HS256' }, claimsFor('sess-confusion'), TEST_SECRET),
  );
  // keys and kids
  reject(
    'EdDSA signed by another Ed25519 key, naming our kid',
    'sess-wrong-key',
    forge('sess-wrong-key', {}, {}, attackerEd.privateKey),
  );
  reject(
    'EdDSA signed by another key that the header embeds as jwk, naming our kid',
    'sess-embedded-jwk',
    forge('sess-embedded-jwk', {}, { jwk: attackerEd.publicKey.export({ format: 'jwk' }) }, attackerEd.privateKey),
  );
  reject(
    'EdDSA signed by another key, naming it with jku',
    'sess-jku',
    forge('sess-jku', {}, { jku: 'https://attacker.example/jwks.json' }, attackerEd.privateKey),
  );
  reject(
    'an unknown kid, signed with our key',
    'sess-unknown-kid',
    forge('sess-unknown-kid', {}, { kid: 'not-one-of-ours' }),
  );
  reject(
    'our kid with a suffix, signed with our key',
    'sess-kid-suffix',
    forge('sess-kid-suffix', {}, { kid: `${ourKid}x` }),
  );
  reject('no kid, signed with our key', 'sess-no-kid', forge('sess-no-kid', {}, { kid: undefined }));
  reject(
    'a kid that is not a string, signed with our key',
    'sess-kid-array',
    forge('sess-kid-array', {}, { kid: [ourKid] }),
  );
  reject(
    'an ES256 header with our kid over an Ed25519 signature by our key',
    'sess-es256-ours',
    forge('sess-es256-ours', {}, { alg: 'ES256' }),
  );
  reject(
    'an ES256 header with our kid, signed by another P-256 key',
    'sess-es256-other',
    forge('sess-es256-other', {}, { alg: 'ES256' }, attackerEc.privateKey),
  );
  // audience and issuer
  reject('aud another service', 'sess-aud', forge('sess-aud', { aud: 'https://other.example' }));
  reject('aud our URL with a trailing slash', 'sess-aud-slash', forge('sess-aud-slash', { aud: `${OUR_ISSUER}/` }));
  reject('aud missing', 'sess-aud-missing', forge('sess-aud-missing', { aud: undefined }));
  reject('aud an array without our URL', 'sess-aud-array', forge('sess-aud-array', { aud: ['https://other.example'] }));
  for (const [name, iss] of [
    ['with a trailing slash (then external, and refused there)', `${OUR_ISSUER}/`],
    ['on https', 'https://localhost:3000'],
    ['in upper case', 'HTTP://LOCALHOST:3000'],
    ['with a suffix', `${OUR_ISSUER}.evil.example`],
    ['as an array holding our URL', [OUR_ISSUER]],
    ['missing', undefined],
    ["the external issuer's (none configured)", 'https://idp.example.com'],
  ] as Array<[string, unknown]>) {
    reject(`iss ${name}`, 'sess-iss', forge('sess-iss', { iss }));
  }
  // time
  reject(
    'expired 2 minutes ago (beyond the tolerance)',
    'sess-expired',
    forge('sess-expired', { iat: now() - 720, exp: now() - 120 }),
    'token_expired',
  );
  reject(
    'iat 5 minutes in the future',
    'sess-iat-future',
    forge('sess-iat-future', { iat: now() + 300, exp: now() + 900 }),
  );
  reject('iat missing', 'sess-iat-missing', forge('sess-iat-missing', { iat: undefined }));
  reject('exp missing', 'sess-exp-missing', forge('sess-exp-missing', { exp: undefined }));
  reject('exp as a string', 'sess-exp-string', forge('sess-exp-string', { exp: String(now() + 600) }));
  // our own claims
  reject('sid missing', 'sess-sid-missing', forge('sess-sid-missing', { sid: undefined }));
  reject('sid a number', 'sess-sid-number', forge('sess-sid-number', { sid: 42 }));
  reject('jti missing', 'sess-jti-missing', forge('sess-jti-missing', { jti: undefined }));
  reject('jti empty', 'sess-jti-empty', forge('sess-jti-empty', { jti: '' }));
  reject('sub missing', 'sess-sub-missing', forge('sess-sub-missing', { sub: undefined }));
  reject('a sub with a control character', 'sess-ctl-\u0001-sub', forge('sess-ctl-\u0001-sub'));
  // header extensions, tampering
  reject('a crit header, signed with our key', 'sess-crit', forge('sess-crit', {}, { crit: ['exp'] }));
  reject('an empty crit array, signed with our key', 'sess-crit', forge('sess-crit', {}, { crit: [] }));
  {
    const [header, , signature] = real.split('.');
    reject(
      "the real token's header and signature over another payload",
      'sess-swapped',
      `${header}.${b64(claimsFor('sess-swapped'))}.${signature}`,
    );
    reject(
      "the real token's header and signature over its own claims with the sub changed",
      'sess-swapped-sub',
      `${header}.${b64({ ...realPayload, sub: 'sess-swapped-sub' })}.${signature}`,
    );
  }
  {
    const other = forge('sess-victim');
    const [header, payload] = other.split('.');
    reject(
      "another valid token's signature on the real token",
      session.userId,
      `${header}.${payload}.${real.split('.')[2]}`,
    );
  }
  reject(
    'a trailing-slash issuer with an external-looking HS256 signature by our PEM',
    'sess-iss-confusion',
    hmacToken(
      { alg: 'HS256', typ: 'JWT' },
      claimsFor('sess-iss-confusion', { iss: `${OUR_ISSUER}/` }),
      ourPublic.export({ type: 'spki', format: 'pem' }).toString(),
    ),
  );

  for (const [name, sub, token, code] of cases) {
    t.test(`${name}: 401 ${code}`, async (t) => {
      // The subject of the real session exists already: only the others can be checked for a row.
      await expectRejected(t, app, await whoAmI(app, token), {
        code: code ?? 'invalid_token',
        token,
        ...(sub === session.userId ? {} : { sub }),
      });
    });
  }

  t.test('an Apple and a Google ID token, validly signed, are not bearer tokens here', async (t) => {
    for (const provider of [providers.apple, providers.google]) {
      const token = provider.mint(`sess-${provider.kind}-id-token`, newNonce(), { aud: OUR_ISSUER });
      await expectRejected(t, app, await whoAmI(app, token), {
        code: 'invalid_token',
        sub: `sess-${provider.kind}-id-token`,
        token,
      });
    }
  });

  t.test('no rejected token made a users row', async (t) => {
    t.equal(await userCount(app), usersAtStart);
  });

  // -------------------------------------------------------------------------------------------
  // The external issuer beside ours
  // -------------------------------------------------------------------------------------------

  t.test('the external HS256 issuer beside sessions', async (t) => {
    t.test('a token of the external issuer (tokenFor) is accepted', async (t) => {
      await expectAcceptedAs(t, await whoAmI(app, tokenFor('external-beside-sessions')), 'external-beside-sessions');
    });
    t.test('one that names an issuer of its own is accepted (no AUTH_JWT_ISSUER configured)', async (t) => {
      await expectAcceptedAs(
        t,
        await whoAmI(app, tokenFor('external-other-iss', { iss: 'https://idp.example.com' })),
        'external-other-iss',
      );
    });
    const ours: Array<[string, string]> = [
      ['iss our URL', tokenFor('external-claims-our-iss', { iss: OUR_ISSUER })],
      [
        'iss and aud our URL, sid and jti (shaped as ours)',
        tokenFor('external-claims-our-iss', {
          iss: OUR_ISSUER,
          aud: OUR_ISSUER,
          sid: session.sessionId,
          jti: randomUUID(),
        }),
      ],
      [
        'iss our URL and our kid in the header',
        hmacToken({ alg: 'HS256', typ: 'JWT', kid: ourKid }, claimsFor('external-claims-our-iss'), TEST_SECRET),
      ],
    ];
    for (const [name, token] of ours) {
      t.test(`an external HS256 token with ${name} is refused: our verifier owns that iss`, async (t) => {
        await expectRejected(t, app, await whoAmI(app, token), {
          code: 'invalid_token',
          sub: 'external-claims-our-iss',
          token,
        });
      });
    }
    t.test('an expired external token is still token_expired beside sessions', async (t) => {
      // By hand: tokenFor's signer sets exp itself.
      const token = hmacToken(
        { alg: 'HS256', typ: 'JWT' },
        { sub: 'external-expired', iat: now() - 720, exp: now() - 120 },
        TEST_SECRET,
      );
      await expectRejected(t, app, await whoAmI(app, token), { code: 'token_expired', sub: 'external-expired', token });
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Mobile sign-in: Apple and Google ID tokens
// ---------------------------------------------------------------------------------------------

t.test('mobile sign-in: every refusal of an ID token is the same 401 and creates no user', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers, LIMITS);
  const refusals: unknown[] = [];
  const attackerRsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ourKey = createPrivateKey(TEST_SESSION_KEY);

  async function expectRefused(t: Test, res: LightMyRequestResponse, usersBefore: number, idToken: string) {
    t.equal(res.statusCode, 401, `status 401 (got ${res.statusCode}: ${res.statusCode === 401 ? '' : res.body})`);
    const body = res.json<ErrorBody>();
    t.strictSame(
      body,
      {
        success: false,
        error: { code: 'invalid_token', message: ID_TOKEN_REFUSED, requestId: res.headers['x-request-id'] },
      },
      'the one refusal body',
    );
    t.equal(
      res.headers['www-authenticate'],
      `Bearer realm="api", error="invalid_token", error_description="${ID_TOKEN_REFUSED}"`,
      'the one challenge',
    );
    if (idToken.length > 8) {
      for (const part of idToken.split('.').filter((part) => part.length > 8))
        t.notOk(res.body.includes(part), 'no part of the token echoed');
    }
    t.notMatch(res.body, /FAST_JWT|FST_|\n\s+at /, 'no internals');
    t.equal(await userCount(app), usersBefore, 'no users row');
    refusals.push({ ...body, error: { ...body.error, requestId: undefined } });
  }

  const forPair = (provider: StandInProvider, other: StandInProvider) => {
    const kind = provider.kind;
    const signIn = (idToken: string, nonce: string, as: string = kind) =>
      mobileSignIn(app, { provider: as, idToken, nonce });
    /** A refused sign-in: the token built from a fresh raw nonce; the body sends `sent` (default the same nonce). */
    const refused = (
      name: string,
      build: (nonce: string) => string,
      options: { sentNonce?: (nonce: string) => string; as?: string } = {},
    ) =>
      t.test(`${kind}: ${name}`, async (t) => {
        const nonce = newNonce();
        const idToken = build(nonce);
        const before = await userCount(app);
        await expectRefused(t, await signIn(idToken, options.sentNonce?.(nonce) ?? nonce, options.as), before, idToken);
      });
    const payloadOf = (sub: string, nonce: string) => segment(provider.mint(sub, nonce), 1);

    t.test(`${kind}: the control is accepted and its access token works`, async (t) => {
      const nonce = newNonce();
      const before = await userCount(app);
      const res = await signIn(provider.mint(`${kind}-control`, nonce), nonce);
      t.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      t.equal(data.created, true);
      t.equal(await userCount(app), before + 1, 'one users row');
      await expectAcceptedAs(t, await whoAmI(app, data.accessToken), data.userId);
    });

    refused('wrong audience', (nonce) => provider.mint(`${kind}-aud`, nonce, { aud: 'com.attacker.app' }));
    refused("the other provider's client id as audience", (nonce) =>
      provider.mint(`${kind}-aud-other`, nonce, { aud: other.clientId }),
    );
    refused('an audience array without our client id', (nonce) =>
      provider.mint(`${kind}-aud-array`, nonce, { aud: ['com.attacker.app'] }),
    );
    refused('audience missing', (nonce) => provider.mint(`${kind}-aud-missing`, nonce, { aud: undefined }));
    refused('wrong issuer', (nonce) => provider.mint(`${kind}-iss`, nonce, { iss: 'https://attacker.example' }));
    refused("the other provider's issuer", (nonce) => provider.mint(`${kind}-iss-other`, nonce, { iss: other.issuer }));
    refused('the issuer with a trailing slash', (nonce) =>
      provider.mint(`${kind}-iss-slash`, nonce, { iss: `${provider.issuer}/` }),
    );
    refused('issuer missing', (nonce) => provider.mint(`${kind}-iss-missing`, nonce, { iss: undefined }));
    refused('expired 2 minutes ago', (nonce) =>
      provider.mint(`${kind}-expired`, nonce, { iat: now() - 900, exp: now() - 120 }),
    );
    refused('exp missing', (nonce) => provider.mint(`${kind}-exp-missing`, nonce, { exp: undefined }));
    refused('iat 5 minutes in the future', (nonce) =>
      provider.mint(`${kind}-iat-future`, nonce, { iat: now() + 300, exp: now() + 900 }),
    );
    refused('iat missing', (nonce) => provider.mint(`${kind}-iat-missing`, nonce, { iat: undefined }));
    refused('sub missing', (nonce) => provider.mint(`${kind}-sub-missing`, nonce, { sub: undefined }));
    refused('a sub with a control character', (nonce) => provider.mint(`${kind}-ctl-\u0001-sub`, nonce));
    refused('nonce missing from the token', (nonce) =>
      provider.mint(`${kind}-nonce-missing`, nonce, { nonce: undefined }),
    );
    refused('nonce empty in the token', (nonce) => provider.mint(`${kind}-nonce-empty`, nonce, { nonce: '' }));
    refused(
      'the token carries another nonce than the one sent',
      (nonce) => provider.mint(`${kind}-nonce-wrong`, nonce),
      { sentNonce: () => newNonce() },
    );
    if (kind === 'apple') {
      refused('the raw nonce in the token (Apple carries its SHA-256 hex)', (nonce) =>
        provider.mint(`${kind}-nonce-raw`, nonce, { nonce }),
      );
      refused('the hex hash sent as the nonce', (nonce) => provider.mint(`${kind}-nonce-hash-sent`, nonce), {
        sentNonce: (nonce) => nonceClaim('apple', nonce),
      });
    } else {
      refused('the SHA-256 hex of the nonce in the token (Google carries it raw)', (nonce) =>
        provider.mint(`${kind}-nonce-hashed`, nonce, { nonce: nonceClaim('apple', nonce) }),
      );
    }
    refused(
      'alg none with an empty signature',
      (nonce) => `${b64({ alg: 'none', kid: provider.kid })}.${b64(payloadOf(`${kind}-alg-none`, nonce))}.`,
    );
    refused('alg none with a real RS256 signature', (nonce) => {
      const valid = provider.mint(`${kind}-alg-none`, nonce);
      return `${b64({ alg: 'none', kid: provider.kid })}.${valid.split('.')[1]}.${valid.split('.')[2]}`;
    });
    for (const [name, key] of confusionKeys(provider.publicKey).slice(0, 4)) {
      refused(`HS256 with the provider's kid, keyed with its public key's ${name.replace(/^the /, '')}`, (nonce) =>
        hmacToken({ alg: 'HS256', kid: provider.kid, typ: 'JWT' }, payloadOf(`${kind}-confusion`, nonce), key),
      );
    }
    refused("signed by another RSA key, naming the provider's kid", (nonce) =>
      provider.mint(`${kind}-wrong-key`, nonce, {}, { key: attackerRsa.privateKey }),
    );
    refused("no kid, signed with the provider's key", (nonce) =>
      signedToken({ alg: 'RS256', typ: 'JWT' }, payloadOf(`${kind}-no-kid`, nonce), provider.privateKey),
    );
    refused("PS256 signed with the provider's own key", (nonce) =>
      signedToken({ alg: 'PS256', kid: provider.kid }, payloadOf(`${kind}-ps256`, nonce), provider.privateKey),
    );
    refused("a crit header, signed with the provider's key", (nonce) =>
      signedToken(
        { alg: 'RS256', kid: provider.kid, crit: ['exp'] },
        payloadOf(`${kind}-crit`, nonce),
        provider.privateKey,
      ),
    );
    refused(
      "the provider's key embedded as jwk does not choose the key (an attacker key, the provider's kid)",
      (nonce) =>
        signedToken(
          { alg: 'RS256', kid: provider.kid, jwk: attackerRsa.publicKey.export({ format: 'jwk' }) },
          payloadOf(`${kind}-jwk`, nonce),
          attackerRsa.privateKey,
        ),
    );
    refused(`a token of ${other.kind} presented as ${kind}`, (nonce) => other.mint(`${kind}-cross`, nonce));
    refused('a tampered payload under a valid signature', (nonce) => {
      const [header, , signature] = provider.mint(`${kind}-victim`, nonce).split('.');
      return `${header}.${b64(payloadOf(`${kind}-tampered`, nonce))}.${signature}`;
    });
    refused('our own session access token as the ID token', (nonce) =>
      signedToken(
        { alg: 'EdDSA', typ: 'at+jwt', kid: kidOf(TEST_SESSION_KEY) },
        { ...payloadOf(`${kind}-ours`, nonce), sid: randomUUID(), jti: randomUUID() },
        ourKey,
      ),
    );
    refused('a malformed idToken ("abc")', () => 'abc');
    refused('two segments', (nonce) => provider.mint(`${kind}-two`, nonce).split('.').slice(0, 2).join('.'));

    t.test(
      `${kind}: an unknown kid is refused after at most one lookup of the provider's JWKS, and the other provider is never asked`,
      async (t) => {
        const before = provider.requests.length;
        const otherBefore = other.requests.length;
        for (let attempt = 0; attempt < 3; attempt++) {
          const nonce = newNonce();
          const idToken = provider.mint(`${kind}-unknown-kid`, nonce, {}, { kid: `${kind}-retired-key` });
          const usersBefore = await userCount(app);
          await expectRefused(t, await signIn(idToken, nonce), usersBefore, idToken);
        }
        t.ok(
          provider.requests.length - before <= 1,
          `at most one extra fetch (got ${provider.requests.length - before})`,
        );
        t.same(
          [...new Set(provider.requests.slice(before))].filter((request) => request !== 'GET /.well-known/jwks.json'),
          [],
          'only the JWKS',
        );
        t.equal(other.requests.length, otherBefore, 'no request to the other provider');
      },
    );

    t.test(`${kind}: schema limits answer 400 before any verification`, async (t) => {
      const before = await userCount(app);
      const requestsBefore = provider.requests.length;
      const long = await signIn(
        `${provider.mint(`${kind}-long`, newNonce())}.${'a'.repeat(9000)}`.slice(0, 9000),
        newNonce(),
      );
      t.equal(long.statusCode, 400, 'a 9000-character idToken is 400');
      t.equal(long.json().error?.code, 'validation_failed');
      const shortNonce = 'n'.repeat(15);
      const short = await signIn(provider.mint(`${kind}-short-nonce`, shortNonce), shortNonce);
      t.equal(short.statusCode, 400, 'a 15-character nonce is 400');
      t.equal(short.json().error?.code, 'validation_failed');
      t.equal(await userCount(app), before, 'no users row');
      t.equal(provider.requests.length, requestsBefore, 'no JWKS lookup');
    });
  };

  forPair(providers.apple, providers.google);
  forPair(providers.google, providers.apple);

  t.test('every refusal read exactly the same (it never says which check failed)', async (t) => {
    t.ok(refusals.length > 60, `${refusals.length} refusals`);
    t.same(
      [...new Set(refusals.map((body) => JSON.stringify(body)))],
      [JSON.stringify({ success: false, error: { code: 'invalid_token', message: ID_TOKEN_REFUSED } })],
    );
  });

  t.test('the users are exactly the two controls', async (t) => {
    t.equal(await userCount(app), 2);
  });
});

t.test('a provider that is not configured answers 400 provider_not_enabled', async (t) => {
  const providers: Providers = await startProviders(t);
  const app = await buildSessionApp(t, providers, { ...LIMITS, AUTH_APPLE_CLIENT_IDS: '' });
  const before = await userCount(app);
  const appleRequests = providers.apple.requests.length;
  const nonce = newNonce();
  const res = await mobileSignIn(app, { provider: 'apple', idToken: providers.apple.mint('apple-off', nonce), nonce });
  t.equal(res.statusCode, 400, res.body);
  t.equal(res.json().error?.code, 'provider_not_enabled');
  t.equal(providers.apple.requests.length, appleRequests, "Apple's JWKS was not asked");
  t.equal(await userCount(app), before, 'no users row');
  const google = await signInWith(app, providers.google, 'google-on');
  await expectAcceptedAs(t, await whoAmI(app, google.accessToken), google.userId);
});

// ---------------------------------------------------------------------------------------------
// Key rotation
// ---------------------------------------------------------------------------------------------

t.test('session key rotation: tokens of the previous key stay valid until they expire', async (t) => {
  const providers = await startProviders(t);
  const database = await createTestDatabase();
  // Teardowns run last-registered first: the database is dropped after every app closed.
  t.teardown(() => database.drop());
  const keyA = TEST_SESSION_KEY;
  const keyB = generateSigningKeyPem();
  const kidA = kidOf(keyA);
  const kidB = kidOf(keyB);
  const publicA = createPublicKey(keyA).export({ type: 'spki', format: 'pem' }).toString();
  const shared = { ...LIMITS, DATABASE_URL: database.url, CRON_INTERNAL: 'false' };

  const app1 = await buildSessionApp(t, providers, shared);
  const app2 = await buildSessionApp(t, providers, {
    ...shared,
    AUTH_SESSION_PRIVATE_KEY: keyB,
    AUTH_SESSION_PREVIOUS_KEY: keyA,
  });
  const app3 = await buildSessionApp(t, providers, { ...shared, AUTH_SESSION_PRIVATE_KEY: keyB });
  const app4 = await buildSessionApp(t, providers, {
    ...shared,
    AUTH_SESSION_PRIVATE_KEY: keyB,
    AUTH_SESSION_PREVIOUS_KEY: publicA,
  });

  const signedA = await signInWith(app1, providers.apple, 'rotation-a');
  const tokenA = signedA.accessToken;
  const jwks = async (app: App) =>
    (await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: Claims[] }>().keys;

  t.test('app 1 (key A) signs with A and publishes A alone', async (t) => {
    t.equal(segment(tokenA, 0).kid, kidA);
    t.same(
      (await jwks(app1)).map((key) => key.kid),
      [kidA],
    );
    await expectAcceptedAs(t, await whoAmI(app1, tokenA), signedA.userId);
  });

  t.test('app 2 (key B, previous A as a private PEM) accepts the token of A', async (t) => {
    await expectAcceptedAs(t, await whoAmI(app2, tokenA), signedA.userId);
  });

  t.test('app 2 publishes two keys: B then A, each under its RFC 7638 thumbprint, public parts only', async (t) => {
    const keys = await jwks(app2);
    t.same(
      keys.map((key) => key.kid),
      [kidB, kidA],
    );
    for (const key of keys) {
      t.equal(key.kid, jwkThumbprint(key), 'kid is the thumbprint');
      t.notOk('d' in key, 'no private member');
    }
  });

  let tokenB = '';
  let userB = '';
  t.test('app 2 signs with B, and accepts its own token', async (t) => {
    const signedB = await signInWith(app2, providers.google, 'rotation-b');
    tokenB = signedB.accessToken;
    userB = signedB.userId;
    t.equal(segment(tokenB, 0).kid, kidB);
    await expectAcceptedAs(t, await whoAmI(app2, tokenB), userB);
  });

  t.test('app 1, which knows only A, refuses the token of B', async (t) => {
    await expectRejected(t, app1, await whoAmI(app1, tokenB), { code: 'invalid_token', token: tokenB });
  });

  t.test('app 3 (key B, no previous key) refuses the token of A and accepts that of B', async (t) => {
    t.same(
      (await jwks(app3)).map((key) => key.kid),
      [kidB],
    );
    await expectRejected(t, app3, await whoAmI(app3, tokenA), { code: 'invalid_token', token: tokenA });
    await expectAcceptedAs(t, await whoAmI(app3, tokenB), userB);
  });

  t.test('app 4 (key B, previous A as a public PEM) accepts the token of A and publishes both', async (t) => {
    await expectAcceptedAs(t, await whoAmI(app4, tokenA), signedA.userId);
    t.same(
      (await jwks(app4)).map((key) => key.kid),
      [kidB, kidA],
    );
  });

  t.test('a token of A that has expired is token_expired on app 2: valid only until it expires', async (t) => {
    const expired = signedToken(
      segment(tokenA, 0),
      { ...segment(tokenA, 1), iat: now() - 720, exp: now() - 120 },
      createPrivateKey(keyA),
    );
    await expectRejected(t, app2, await whoAmI(app2, expired), { code: 'token_expired', token: expired });
  });

  t.test("the previous key only verifies: a token of A with B's kid is refused on app 2", async (t) => {
    const forged = signedToken(
      { ...segment(tokenA, 0), kid: kidB },
      { ...segment(tokenA, 1), jti: randomUUID() },
      createPrivateKey(keyA),
    );
    await expectRejected(t, app2, await whoAmI(app2, forged), { code: 'invalid_token', token: forged });
  });
});
