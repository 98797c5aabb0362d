import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError } from '../../../../config/index.js';
import {
  DEV_KEY_FILE,
  generateSigningKeyPem,
  loadSessionKeyring,
  signingKeyFromPem,
  thumbprint,
} from '../../../../plugins/app/sessions/keys.js';
import { decodeEntries, encodeEntries, RevocationList } from '../../../../plugins/app/sessions/revocations.js';
import {
  emailVerifiedClaim,
  hashRefreshToken,
  isRefreshTokenShape,
  newRefreshToken,
  nonceMatches,
  openSuccessor,
  revocationKey,
  sealSuccessor,
} from '../../../../plugins/app/sessions/rules.js';

const quiet = { warn() {} };

t.test('refresh tokens: random, 43 base64url characters, stored as a hash', async (t) => {
  const tokens = new Set(Array.from({ length: 1000 }, newRefreshToken));
  t.equal(tokens.size, 1000, 'no repeats');
  for (const token of tokens) t.ok(isRefreshTokenShape(token));
  t.notOk(isRefreshTokenShape('short'));
  t.notOk(isRefreshTokenShape(`${'a'.repeat(42)}=`), 'padding is not base64url');
  const token = newRefreshToken();
  t.equal(hashRefreshToken(token), hashRefreshToken(token), 'the hash is stable');
  t.not(
    hashRefreshToken(token),
    createHash('sha256').update(token).digest('base64url'),
    'and domain-separated from a bare SHA-256',
  );
});

t.test('a sealed successor opens only with the token it was sealed for', async (t) => {
  const presented = newRefreshToken();
  const successor = newRefreshToken();
  const sealed = sealSuccessor(presented, successor);
  t.notOk(sealed.includes(successor), 'not readable in the database');
  t.equal(openSuccessor(presented, sealed), successor);
  t.equal(openSuccessor(newRefreshToken(), sealed), undefined, 'another token cannot open it');
  const bytes = Buffer.from(sealed, 'base64url');
  bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 1, bytes.length - 1);
  t.equal(openSuccessor(presented, bytes.toString('base64url')), undefined, 'an altered seal does not open');
  t.equal(openSuccessor(presented, 'short'), undefined);
  t.not(sealSuccessor(presented, successor), sealed, 'a fresh IV each time');
});

t.test('nonces: Apple carries the SHA-256 hex of the raw nonce, Google the raw nonce', async (t) => {
  const raw = 'p8Vq3yq5c1R2sWm0xT7eUa';
  const hashed = createHash('sha256').update(raw).digest('hex');
  t.ok(nonceMatches('apple', hashed, raw));
  t.notOk(nonceMatches('apple', raw, raw), 'Apple with the raw nonce in the token');
  t.notOk(nonceMatches('apple', hashed.toUpperCase(), raw), 'hex is compared exactly');
  t.ok(nonceMatches('google', raw, raw));
  t.notOk(nonceMatches('google', hashed, raw), 'Google with a hashed nonce');
  for (const claimed of [undefined, null, '', 5, [raw]])
    t.notOk(nonceMatches('google', claimed, raw), `claim ${JSON.stringify(claimed)}`);
  t.notOk(nonceMatches('google', '', ''), 'an empty nonce never matches');
});

t.test("email_verified is read from either provider's spelling, and only as profile data", async (t) => {
  t.equal(emailVerifiedClaim(true), true);
  t.equal(emailVerifiedClaim('true'), true);
  t.equal(emailVerifiedClaim(false), false);
  t.equal(emailVerifiedClaim('false'), false);
  t.equal(emailVerifiedClaim('yes'), null);
  t.equal(emailVerifiedClaim(undefined), null);
});

t.test('revocation keys', async (t) => {
  t.equal(revocationKey.session('s1'), 'sid:s1');
  const hashed = (text: string) => `jti:${createHash('sha256').update(text).digest('base64url')}`;
  t.equal(revocationKey.jti('https://idp', 'j1'), hashed('["https://idp","j1"]'), 'the hash of [iss, jti]');
  t.equal(revocationKey.jti(undefined, 'j1'), hashed('[null,"j1"]'), 'a token without iss');
  t.equal(revocationKey.jti('https://idp', 'j'.repeat(10_000)).length, 47, 'bounded, however long the jti');
  t.not(revocationKey.jti(undefined, 'j1'), revocationKey.jti('', 'j1'), 'no iss is not an empty iss');
  t.not(revocationKey.jti('a', 'b:c'), revocationKey.jti('a:b', 'c'), 'issuer and jti cannot run together');
  t.match(revocationKey.tokenHash('x.y.z'), /^sha256:[A-Za-z0-9_-]{43}$/);
});

t.test('the revoked set forgets an entry once no token it refuses can be valid', async (t) => {
  const list = new RevocationList();
  list.add({ key: 'sid:a', until: 2000 }, 1000);
  list.add({ key: 'sid:old', until: 500 }, 1000);
  t.ok(list.has('sid:a', 1500));
  t.notOk(list.has('sid:a', 2000), 'not past its time');
  t.notOk(list.has('sid:old', 1000), 'an entry already past is not added');
  list.add({ key: 'sid:a', until: 1200 }, 1000);
  t.ok(list.has('sid:a', 1500), 'a shorter entry never shortens a longer one');
  t.notOk(list.holdsHashes);
  list.add({ key: 'sha256:h', until: 3000 }, 1000);
  t.ok(list.holdsHashes);
  list.prune(2500);
  t.equal(list.size, 1);
  list.prune(3000);
  t.equal(list.size, 0);
  t.notOk(list.holdsHashes, 'the hash count follows the pruning');
});

t.test('bus messages: what is not a list of [key, until] is ignored', async (t) => {
  const entries = [
    { key: 'sid:a', until: 1 },
    { key: 'jti::b', until: 2 },
  ];
  t.same(decodeEntries(encodeEntries(entries)), entries);
  for (const payload of ['', 'null', '{}', '[["k"]]', '[[1,2]]', '[["k","1"]]', 'not json'])
    t.same(decodeEntries(payload), [], payload);
  t.ok(
    Buffer.byteLength(
      encodeEntries(Array.from({ length: 80 }, (_, i) => ({ key: `sid:${'f'.repeat(36)}${i}`, until: Date.now() }))),
    ) < 8000,
    '80 session entries fit one NOTIFY',
  );
});

t.test('signing keys', async (t) => {
  t.test('Ed25519 signs EdDSA, P-256 signs ES256, and the kid is the RFC 7638 thumbprint', async (t) => {
    const ed = signingKeyFromPem(generateSigningKeyPem());
    t.equal(ed.algorithm, 'EdDSA');
    t.equal(ed.kid, thumbprint(ed.jwk));
    t.notOk('d' in ed.jwk, 'the published key has no private part');
    const { generateKeyPairSync } = await import('node:crypto');
    const ec = signingKeyFromPem(
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    t.equal(ec.algorithm, 'ES256');
    t.ok(ec.jwk.y);
    // RFC 7638 §3.2: the required members, lexicographic order, no white space.
    const members = `{"crv":"P-256","kty":"EC","x":"${ec.jwk.x}","y":"${ec.jwk.y}"}`;
    t.equal(ec.kid, createHash('sha256').update(members).digest('base64url'));
    t.equal(ed.kid, createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${ed.jwk.x}"}`).digest('base64url'));
  });
  t.test('unusable keys stop the start with a message naming the variable', async (t) => {
    const { generateKeyPairSync } = await import('node:crypto');
    t.throws(() => signingKeyFromPem('not a key'), ConfigError);
    t.throws(
      () =>
        signingKeyFromPem(
          generateKeyPairSync('rsa', { modulusLength: 2048 })
            .privateKey.export({ type: 'pkcs8', format: 'pem' })
            .toString(),
        ),
      /AUTH_SESSION_PRIVATE_KEY is a rsa key/,
    );
    t.throws(
      () =>
        signingKeyFromPem(
          generateKeyPairSync('ec', { namedCurve: 'P-384' })
            .privateKey.export({ type: 'pkcs8', format: 'pem' })
            .toString(),
        ),
      /secp384r1/,
    );
  });
  t.test('development: a key generated into DATA_DIR once, private to its owner, and read back', async (t) => {
    const folder = await mkdtemp(join(tmpdir(), 'session-key-'));
    t.teardown(() => rm(folder, { recursive: true, force: true }));
    const first = await loadSessionKeyring({}, folder, quiet);
    const second = await loadSessionKeyring({}, folder, quiet);
    t.equal(second.current.kid, first.current.kid, 'the same key after a restart');
    t.equal((await stat(join(folder, DEV_KEY_FILE))).mode & 0o777, 0o600);
    t.match(await readFile(join(folder, DEV_KEY_FILE), 'utf8'), /BEGIN PRIVATE KEY/);
    const throwaway = await loadSessionKeyring({}, 'memory://', quiet);
    t.not(throwaway.current.kid, first.current.kid, 'memory:// keeps its key in the process only');
  });
  t.test('the previous key verifies, and is dropped when it is the current one', async (t) => {
    const current = generateSigningKeyPem();
    const previous = generateSigningKeyPem();
    const rotated = await loadSessionKeyring({ privateKeyPem: current, previousKeyPem: previous }, 'memory://', quiet);
    t.equal(rotated.byKid.size, 2);
    t.ok(rotated.previous);
    const same = await loadSessionKeyring({ privateKeyPem: current, previousKeyPem: current }, 'memory://', quiet);
    t.equal(same.byKid.size, 1);
    t.equal(same.previous, undefined);
  });
});
