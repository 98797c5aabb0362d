import { spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildApp } from '../../app.js';
import {
  type AppConfig,
  ConfigError,
  DEV_JWT_SECRET,
  isLoopbackHost,
  loadConfig,
  parseDuration,
  parseSize,
  parseTrustProxy,
} from '../../config/index.js';
import { nodeArgsFor } from '../support/paths.js';

/**
 * Configuration: defaults, every refusal naming its
 * variable, the key-source rules, the unit parsers, and a real `server.ts` refusing to start.
 * loadConfig(source) reads only the object it is given, so every case is an explicit env object;
 * loadConfig(source, true), as server.ts calls it, also reads `.env` (tested in a temporary directory).
 */

/** The type of a subtest's `t` (tap's root `t` is a TAP, a different class). */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];
type Env = Record<string, string | undefined>;

const PROD_SECRET = 'a-production-secret-of-at-least-32-characters';

/** Asserts that loadConfig(env) throws a ConfigError whose message starts by naming `variable`. */
function expectConfigError(t: Test, env: Env, variable: string, also?: RegExp): void {
  let thrown: unknown;
  try {
    loadConfig(env);
  } catch (error) {
    thrown = error;
  }
  t.ok(thrown instanceof ConfigError, `${JSON.stringify(env).slice(0, 80)} throws a ConfigError`);
  const error = thrown as Error;
  t.equal(error?.name, 'ConfigError');
  t.match(error?.message, new RegExp(`^Invalid configuration: ${variable}\\b`), `the message names ${variable}`);
  if (also) t.match(error?.message, also);
}

function keySourceOf(config: AppConfig) {
  return config.auth.keySource;
}

/** A fresh key pair as PEM strings (SPKI public key, PKCS#8 private key). */
function pemPair(kind: 'ec' | 'ed25519', namedCurve?: string): { publicKey: string; privateKey: string } {
  const pair =
    kind === 'ec' ? generateKeyPairSync('ec', { namedCurve: namedCurve ?? 'P-256' }) : generateKeyPairSync('ed25519');
  return {
    publicKey: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

t.test('defaults match the README in development', async (t) => {
  const config = loadConfig({});
  t.equal(config.host, '127.0.0.1');
  t.equal(config.port, 3000);
  t.equal(config.nodeEnv, 'development');
  t.equal(config.isProduction, false);
  t.equal(config.dataDir, './data');
  t.equal(config.databaseUrl, undefined);
  t.equal(config.devBaseUrl, 'http://localhost:3000');
  t.equal(config.publicBaseUrl, undefined);
  t.same(config.rateLimit, { max: 300, windowMs: 60_000 });
  t.equal(config.requestTimeoutMs, 30_000);
  t.equal(config.bodyLimitBytes, 1_048_576);
  t.equal(config.demoData, true);
  t.same(config.auth.adminClaim, { name: 'role', value: 'admin' });
  t.equal(config.auth.adminUserIds.size, 0);
  t.equal(config.corsOrigins, '*');
  t.equal(config.trustProxy, false);
  t.equal(config.logLevel, 'info');
  t.equal(config.redisUrl, undefined);
  t.same(keySourceOf(config), { kind: 'secret', secret: DEV_JWT_SECRET, algorithms: ['HS256'], isDevSecret: true });
});

t.test('production turns the dev defaults off', async (t) => {
  const config = loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: PROD_SECRET });
  t.equal(config.isProduction, true);
  t.equal(config.nodeEnv, 'production');
  t.equal(config.demoData, false);
  t.equal(config.auth.adminClaim, undefined);
  t.same(config.corsOrigins, []);
  // The rest of the defaults do not depend on NODE_ENV.
  t.equal(config.host, '127.0.0.1');
  t.equal(config.port, 3000);
  t.same(config.rateLimit, { max: 300, windowMs: 60_000 });
  t.equal(config.requestTimeoutMs, 30_000);
  t.equal(config.bodyLimitBytes, 1_048_576);
  t.same(keySourceOf(config), { kind: 'secret', secret: PROD_SECRET, algorithms: ['HS256'], isDevSecret: false });
});

t.test('explicit values are parsed and typed', async (t) => {
  const config = loadConfig({
    HOST: '0.0.0.0',
    PORT: '8080',
    DATA_DIR: 'memory://',
    DATABASE_URL: 'postgresql://u@db:5432/x',
    DEMO_DATA: 'false',
    RATE_LIMIT_MAX: '5',
    RATE_LIMIT_WINDOW: '10 seconds',
    REQUEST_TIMEOUT: '500 ms',
    BODY_LIMIT: '512 KB',
    AUTH_ADMIN_CLAIM: 'groups = platform-admins',
    ADMIN_USER_IDS: ' alice, bob ,,carol ',
    CORS_ORIGINS: 'https://a.example, https://b.example',
    TRUST_PROXY: '2',
    REDIS_URL: 'redis://127.0.0.1:6379',
    AUTH_JWT_SECRET: PROD_SECRET,
  });
  t.equal(config.host, '0.0.0.0');
  t.equal(config.port, 8080);
  t.equal(config.databaseUrl, 'postgresql://u@db:5432/x');
  t.equal(config.demoData, false);
  t.same(config.rateLimit, { max: 5, windowMs: 10_000 });
  t.equal(config.requestTimeoutMs, 500);
  t.equal(config.bodyLimitBytes, 512_000);
  t.same(config.auth.adminClaim, { name: 'groups', value: 'platform-admins' });
  t.same([...config.auth.adminUserIds], ['alice', 'bob', 'carol']);
  t.same(config.corsOrigins, ['https://a.example', 'https://b.example']);
  t.equal(config.trustProxy, 2);
  t.equal(config.redisUrl, 'redis://127.0.0.1:6379');
});

t.test('development defaults apply only on a loopback host: anywhere else nothing is open by default', async (t) => {
  // A server on 0.0.0.0 with NODE_ENV unset once used the public dev secret and the role=admin
  // claim: anyone could mint a platform-admin token.
  for (const host of ['0.0.0.0', '::', '10.1.2.3', 'api.internal']) {
    expectConfigError(t, { HOST: host, DATABASE_URL: 'postgres://db/packs' }, 'AUTH_JWT_SECRET', /loopback/);
    expectConfigError(t, { HOST: host, AUTH_JWT_SECRET: DEV_JWT_SECRET }, 'AUTH_JWT_SECRET', /dev secret/);
    expectConfigError(t, { HOST: host, AUTH_JWT_SECRET: 'short' }, 'AUTH_JWT_SECRET', /32 characters/);
    const config = loadConfig({ HOST: host, AUTH_JWT_SECRET: PROD_SECRET });
    t.equal(config.devDefaults, false, `${host}: no development defaults`);
    t.equal(config.auth.adminClaim, undefined, `${host}: no admin claim unless configured`);
    t.same(config.corsOrigins, [], `${host}: no CORS origin unless configured`);
    t.equal(config.demoData, false, `${host}: no demo data unless asked for`);
    t.equal(
      loadConfig({ HOST: host, AUTH_JWT_SECRET: PROD_SECRET, DEMO_DATA: 'true' }).demoData,
      true,
      'demo data when asked for',
    );
  }
  for (const host of ['127.0.0.1', '127.0.0.53', '::1', '[::1]', 'localhost', 'LOCALHOST']) {
    t.ok(isLoopbackHost(host), `${host} is loopback`);
    const config = loadConfig({ HOST: host });
    t.equal(config.devDefaults, true, `${host}: development defaults`);
    t.same(keySourceOf(config), { kind: 'secret', secret: DEV_JWT_SECRET, algorithms: ['HS256'], isDevSecret: true });
    t.same(config.auth.adminClaim, { name: 'role', value: 'admin' });
    t.equal(config.corsOrigins, '*');
    t.equal(config.demoData, true);
  }
  for (const host of ['0.0.0.0', '128.0.0.1', '::ffff:127.0.0.1', 'localhost.example.com', ''])
    t.notOk(isLoopbackHost(host), `${host || '(empty)'} is not loopback`);
  t.equal(
    loadConfig({ HOST: '127.0.0.1', NODE_ENV: 'production', AUTH_JWT_SECRET: PROD_SECRET }).devDefaults,
    false,
    'production never has them',
  );
});

t.test('each bad value throws a ConfigError naming its variable', async (t) => {
  const cases: Array<[Env, string, RegExp?]> = [
    [{ PORT: 'abc' }, 'PORT', /integer/],
    [{ PORT: '70000' }, 'PORT', /65535/],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ AUTH_JWKS_URL: 'ftp://x' }, 'AUTH_JWKS_URL'],
    [{ RATE_LIMIT_WINDOW: 'soon' }, 'RATE_LIMIT_WINDOW', /"soon"/],
    [{ BODY_LIMIT: 'big' }, 'BODY_LIMIT', /"big"/],
    [{ BODY_LIMIT: '0' }, 'BODY_LIMIT', /"0"/],
    [{ REQUEST_TIMEOUT: '-5' }, 'REQUEST_TIMEOUT', /"-5"/],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
    [{ AUTH_JWT_PUBLIC_KEY: 'not-a-pem' }, 'AUTH_JWT_PUBLIC_KEY'],
    [{ AUTH_ADMIN_CLAIM: 'novalue' }, 'AUTH_ADMIN_CLAIM'],
    [{ RATE_LIMIT_MAX: '0' }, 'RATE_LIMIT_MAX'],
    [{ DEMO_DATA: 'yes' }, 'DEMO_DATA'],
    [{ REQUEST_TIMEOUT: '15 fortnights' }, 'REQUEST_TIMEOUT'],
    [{ MAX_EVENT_LOOP_DELAY: 'fast' }, 'MAX_EVENT_LOOP_DELAY'],
    [{ REDIS_URL: 'http://127.0.0.1:6379' }, 'REDIS_URL'],
  ];
  for (const [env, variable, also] of cases) {
    await t.test(`${JSON.stringify(env)} → ${variable}`, async (t) => expectConfigError(t, env, variable, also));
  }
});

t.test('an empty value (VAR= in a .env file) counts as unset, for every variable', async (t) => {
  for (const variable of ['DATABASE_URL', 'AUTH_JWKS_URL', 'REDIS_URL', 'PUBLIC_BASE_URL']) {
    t.doesNotThrow(() => loadConfig({ [variable]: '' }), `${variable}= is accepted`);
  }
  const config = loadConfig({ DATABASE_URL: '', AUTH_JWKS_URL: '', REDIS_URL: '', PUBLIC_BASE_URL: '' });
  t.equal(config.databaseUrl, undefined, 'DATABASE_URL= means no PostgreSQL');
  t.equal(config.redisUrl, undefined, 'REDIS_URL= means the in-memory store');
  t.equal(config.publicBaseUrl, undefined);
  t.same(
    keySourceOf(config),
    { kind: 'secret', secret: DEV_JWT_SECRET, algorithms: ['HS256'], isDevSecret: true },
    'AUTH_JWKS_URL= is no key source',
  );
  // Variables with a default fall back to it, exactly as if absent.
  const blank = loadConfig({
    PORT: '',
    HOST: '',
    NODE_ENV: '',
    RATE_LIMIT_WINDOW: '',
    REQUEST_TIMEOUT: '',
    TRUST_PROXY: '',
    LOG_LEVEL: '',
  });
  const absent = loadConfig({});
  t.equal(blank.port, absent.port);
  t.equal(blank.host, absent.host);
  t.equal(blank.nodeEnv, 'development');
  t.same(blank.rateLimit, absent.rateLimit);
  t.equal(blank.requestTimeoutMs, absent.requestTimeoutMs);
  t.equal(blank.trustProxy, false);
  t.equal(blank.logLevel, 'info');
  // Production still needs a real key: an empty one is a missing one.
  expectConfigError(
    t,
    { NODE_ENV: 'production', AUTH_JWT_SECRET: '', AUTH_JWKS_URL: '' },
    'AUTH_JWT_SECRET',
    /is required unless/,
  );
});

t.test('a TRUST_PROXY value that is no address is refused by name', async (t) => {
  // A /0 range trusts every address: TRUST_PROXY=true by another name.
  for (const value of [
    'True',
    'TRUE',
    'yes',
    '10.0.0.1/99',
    '::1/129',
    'not-an-ip',
    '10.0.0.1, nope',
    '10.0.0.1/8/1',
    '10.0.0.1/',
    '10.0.0.0/0',
    '::/0',
  ]) {
    expectConfigError(t, { TRUST_PROXY: value }, 'TRUST_PROXY');
  }
  // Accepted: false, a hop count, IP addresses and CIDR ranges (v4 and v6), and proxy-addr's names.
  t.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
  t.equal(loadConfig({ TRUST_PROXY: '3' }).trustProxy, 3);
  t.same(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16, ::1, fd00::/8' }).trustProxy, [
    '10.0.0.1',
    '192.168.0.0/16',
    '::1',
    'fd00::/8',
  ]);
  t.same(loadConfig({ TRUST_PROXY: 'loopback, linklocal, uniquelocal' }).trustProxy, [
    'loopback',
    'linklocal',
    'uniquelocal',
  ]);
});

t.test('an accepted TRUST_PROXY list starts the app and trusts the forwarded address', async (t) => {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: 'memory://',
    DEMO_DATA: 'false',
    MAX_EVENT_LOOP_DELAY: '0',
    RATE_LIMIT_MAX: '1',
    TRUST_PROXY: 'loopback, 10.0.0.0/8, fd00::/8',
  });
  const app = await buildApp(config);
  t.teardown(() => app.close());
  await app.ready();
  // inject comes from 127.0.0.1, a trusted proxy: the anonymous rate-limit bucket is the forwarded client's.
  const from = (client: string) =>
    app.inject({ method: 'GET', url: '/docs/json', headers: { 'x-forwarded-for': client } });
  t.equal((await from('203.0.113.9')).statusCode, 200);
  t.equal((await from('203.0.113.10')).statusCode, 200, 'another client has its own bucket');
  t.equal((await from('203.0.113.9')).statusCode, 429, 'the first client is over its limit of 1');
});

t.test('zero durations that cannot work are refused; MAX_EVENT_LOOP_DELAY=0 turns the check off', async (t) => {
  expectConfigError(t, { RATE_LIMIT_WINDOW: '0' }, 'RATE_LIMIT_WINDOW', /longer than zero/);
  expectConfigError(t, { RATE_LIMIT_WINDOW: '0 seconds' }, 'RATE_LIMIT_WINDOW', /longer than zero/);
  expectConfigError(t, { REQUEST_TIMEOUT: '0' }, 'REQUEST_TIMEOUT', /longer than zero/);
  expectConfigError(t, { RATE_LIMIT_WINDOW: '0 minutes' }, 'RATE_LIMIT_WINDOW', /longer than zero/);
  expectConfigError(t, { REQUEST_TIMEOUT: '0' }, 'REQUEST_TIMEOUT', /longer than zero/);
  expectConfigError(t, { REQUEST_TIMEOUT: '0 ms' }, 'REQUEST_TIMEOUT', /longer than zero/);
  // A value that rounds to 0 ms is zero too.
  expectConfigError(t, { REQUEST_TIMEOUT: '0.4 ms' }, 'REQUEST_TIMEOUT', /longer than zero/);
  t.equal(loadConfig({ MAX_EVENT_LOOP_DELAY: '0' }).maxEventLoopDelayMs, 0);
  t.equal(loadConfig({ MAX_EVENT_LOOP_DELAY: '0 ms' }).maxEventLoopDelayMs, 0);
  t.equal(loadConfig({}).maxEventLoopDelayMs, 1000, 'on by default');
});

t.test('key source: production needs a real key', async (t) => {
  expectConfigError(t, { NODE_ENV: 'production' }, 'AUTH_JWT_SECRET', /is required unless/);
  expectConfigError(t, { NODE_ENV: 'production', AUTH_JWT_SECRET: '' }, 'AUTH_JWT_SECRET', /is required unless/);
  expectConfigError(t, { NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(31) }, 'AUTH_JWT_SECRET', /at least 32/);
  expectConfigError(t, { NODE_ENV: 'production', AUTH_JWT_SECRET: DEV_JWT_SECRET }, 'AUTH_JWT_SECRET', /dev secret/);
  const exactly32 = loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: 'y'.repeat(32) });
  t.same(keySourceOf(exactly32), { kind: 'secret', secret: 'y'.repeat(32), algorithms: ['HS256'], isDevSecret: false });
  // A public key or a JWKS URL is enough in production.
  const jwks = loadConfig({ NODE_ENV: 'production', AUTH_JWKS_URL: 'https://idp.example/.well-known/jwks.json' });
  const source = keySourceOf(jwks);
  t.equal(source.kind, 'jwks');
  if (source.kind === 'jwks') {
    t.equal(source.jwksUrl.href, 'https://idp.example/.well-known/jwks.json');
    t.same(source.algorithms, ['RS256', 'ES256', 'ES384', 'ES512', 'EdDSA']);
  }
});

t.test('key source: exactly one may be configured', async (t) => {
  const { publicKey } = pemPair('ed25519');
  expectConfigError(
    t,
    { AUTH_JWT_SECRET: PROD_SECRET, AUTH_JWT_PUBLIC_KEY: publicKey },
    'AUTH_JWT_SECRET and AUTH_JWT_PUBLIC_KEY',
    /configure exactly one key source/,
  );
  expectConfigError(
    t,
    { AUTH_JWT_PUBLIC_KEY: publicKey, AUTH_JWKS_URL: 'https://idp.example/jwks' },
    'AUTH_JWT_PUBLIC_KEY and AUTH_JWKS_URL',
  );
  expectConfigError(
    t,
    { AUTH_JWT_SECRET: PROD_SECRET, AUTH_JWKS_URL: 'https://idp.example/jwks' },
    'AUTH_JWT_SECRET and AUTH_JWKS_URL',
  );
  // An empty secret next to a key is no conflict: '' counts as unset.
  const config = loadConfig({ AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: publicKey });
  t.equal(keySourceOf(config).kind, 'publicKey');
});

t.test('key source: development without a key uses the documented dev secret', async (t) => {
  for (const env of [{}, { AUTH_JWT_SECRET: '' }, { NODE_ENV: 'test' }, { AUTH_JWT_SECRET: DEV_JWT_SECRET }] as Env[]) {
    t.same(
      keySourceOf(loadConfig(env)),
      { kind: 'secret', secret: DEV_JWT_SECRET, algorithms: ['HS256'], isDevSecret: true },
      JSON.stringify(env),
    );
  }
  // Any other secret is not the dev secret, even a short one in development.
  t.same(keySourceOf(loadConfig({ AUTH_JWT_SECRET: 'short' })), {
    kind: 'secret',
    secret: 'short',
    algorithms: ['HS256'],
    isDevSecret: false,
  });
});

t.test('key source: PEM public keys pin the algorithm to the key type', async (t) => {
  const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
  expectConfigError(
    t,
    { AUTH_JWT_PUBLIC_KEY: weak.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    'AUTH_JWT_PUBLIC_KEY',
    /shorter than 2048 bits/,
  );

  // RSA 2048 given as PKCS#1 ("BEGIN RSA PUBLIC KEY") with surrounding whitespace: stored as canonical SPKI.
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pkcs1 = rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const canonical = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  t.match(pkcs1, /^-----BEGIN RSA PUBLIC KEY-----/);
  const rsaSource = keySourceOf(loadConfig({ NODE_ENV: 'production', AUTH_JWT_PUBLIC_KEY: `\n  ${pkcs1}\n\n` }));
  t.same(rsaSource, { kind: 'publicKey', publicKeyPem: canonical, algorithms: ['RS256'] });

  const p256 = pemPair('ec', 'P-256');
  t.same(keySourceOf(loadConfig({ AUTH_JWT_PUBLIC_KEY: p256.publicKey })), {
    kind: 'publicKey',
    publicKeyPem: p256.publicKey,
    algorithms: ['ES256'],
  });

  const ed = pemPair('ed25519');
  t.same(keySourceOf(loadConfig({ AUTH_JWT_PUBLIC_KEY: ed.publicKey })), {
    kind: 'publicKey',
    publicKeyPem: ed.publicKey,
    algorithms: ['EdDSA'],
  });

  // Unsupported key types are refused by name.
  const k1 = pemPair('ec', 'secp256k1');
  expectConfigError(t, { AUTH_JWT_PUBLIC_KEY: k1.publicKey }, 'AUTH_JWT_PUBLIC_KEY', /unsupported curve secp256k1/);
  const x25519 = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
  expectConfigError(t, { AUTH_JWT_PUBLIC_KEY: x25519 }, 'AUTH_JWT_PUBLIC_KEY', /x25519/);
});

t.test('key source: a PEM with literal \\n escapes (as .env files carry it) is accepted', async (t) => {
  const { publicKey } = pemPair('ec', 'P-256');
  const escaped = publicKey.trim().replace(/\n/g, '\\n');
  t.notMatch(escaped, /\n/, 'the value is one line');
  const source = keySourceOf(loadConfig({ AUTH_JWT_PUBLIC_KEY: escaped }));
  t.same(source, { kind: 'publicKey', publicKeyPem: publicKey, algorithms: ['ES256'] });
  t.equal(createPublicKey(publicKey).asymmetricKeyType, 'ec');
});

t.test('key source: a private key given as AUTH_JWT_PUBLIC_KEY is refused', async (t) => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeys: Record<string, string> = {
    'Ed25519 PKCS#8': pemPair('ed25519').privateKey,
    'P-256 PKCS#8': pemPair('ec', 'P-256').privateKey,
    'RSA PKCS#8': rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    'RSA PKCS#1': rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    'EC SEC1': generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'sec1', format: 'pem' })
      .toString(),
  };
  for (const [kind, privateKey] of Object.entries(privateKeys)) {
    t.test(kind, async (t) => {
      expectConfigError(t, { AUTH_JWT_PUBLIC_KEY: privateKey }, 'AUTH_JWT_PUBLIC_KEY', /private key/);
      // Also with literal \n escapes, as a .env file would carry it, and in production.
      const escaped = privateKey.trim().replace(/\n/g, '\\n');
      expectConfigError(
        t,
        { NODE_ENV: 'production', AUTH_JWT_PUBLIC_KEY: escaped },
        'AUTH_JWT_PUBLIC_KEY',
        /private key/,
      );
    });
  }
  // The matching public key is accepted.
  const publicKey = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  t.same(keySourceOf(loadConfig({ AUTH_JWT_PUBLIC_KEY: publicKey })), {
    kind: 'publicKey',
    publicKeyPem: publicKey,
    algorithms: ['RS256'],
  });
});

t.test('parseDuration', async (t) => {
  const ok: Array<[string, number]> = [
    ['30 seconds', 30_000],
    ['15m', 900_000],
    ['1 hour', 3_600_000],
    ['500', 500],
    ['500 ms', 500],
    ['1.5 s', 1500],
    ['2 days', 172_800_000],
    [' 1 MINUTE ', 60_000],
  ];
  for (const [input, expected] of ok) t.equal(parseDuration('X', input), expected, JSON.stringify(input));
  for (const input of ['soon', '-5', '', '5 fortnights', '1 h 30 m', 'ms', '0', '0 s', '0.0001 s']) {
    t.throws(() => parseDuration('SOME_VAR', input), {
      name: 'ConfigError',
      message: /^Invalid configuration: SOME_VAR /,
    });
  }
  // Zero only where the caller says it means "off".
  t.equal(parseDuration('X', '0', { allowZero: true }), 0);
  t.equal(parseDuration('X', '0 seconds', { allowZero: true }), 0);
  t.equal(parseDuration('X', '2 s', { allowZero: true }), 2000);
  t.throws(() => parseDuration('X', '-1', { allowZero: true }), { name: 'ConfigError' });
});

t.test('parseSize', async (t) => {
  const ok: Array<[string, number]> = [
    ['1 MiB', 1_048_576],
    ['512 KB', 512_000],
    ['512 KiB', 524_288],
    ['2', 2],
    ['1.5 kib', 1536],
    ['1 MB', 1_000_000],
    ['1 GiB', 1_073_741_824],
  ];
  for (const [input, expected] of ok) t.equal(parseSize('X', input), expected, JSON.stringify(input));
  for (const input of ['big', '0', '0 KB', '-1', '', '5 PB']) {
    t.throws(() => parseSize('BODY_LIMIT', input), {
      name: 'ConfigError',
      message: /^Invalid configuration: BODY_LIMIT /,
    });
  }
});

t.test('parseTrustProxy', async (t) => {
  t.equal(parseTrustProxy('false'), false);
  t.equal(parseTrustProxy(''), false);
  t.equal(parseTrustProxy('1'), 1);
  t.equal(parseTrustProxy(' 2 '), 2);
  t.same(parseTrustProxy('10.0.0.1, 10.0.0.2'), ['10.0.0.1', '10.0.0.2']);
  t.same(parseTrustProxy('10.0.0.0/8,,loopback'), ['10.0.0.0/8', 'loopback']);
  t.same(parseTrustProxy('10.0.0.0/32, ::1/128, 2001:db8::/32'), ['10.0.0.0/32', '::1/128', '2001:db8::/32']);
  t.same(parseTrustProxy('linklocal,uniquelocal'), ['linklocal', 'uniquelocal']);
  for (const value of [
    'true',
    'True',
    'yes',
    'not-an-ip',
    '10.0.0.1/99',
    '10.0.0.1/33',
    '::1/129',
    '10.0.0.1/abc',
    '10.0.0.1/8/8',
    'loopback/8',
    '999.0.0.1',
  ]) {
    t.throws(
      () => parseTrustProxy(value),
      { name: 'ConfigError', message: /^Invalid configuration: TRUST_PROXY / },
      JSON.stringify(value),
    );
  }
});

t.test('the app refuses to start with a bad configuration', async (t) => {
  t.throws(() => loadConfig({ PORT: 'abc' }), { name: 'ConfigError' });
  // A configuration that validates but cannot work: nothing listens on port 1.
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
    MAX_EVENT_LOOP_DELAY: '0',
  });
  await t.rejects(buildApp(config), {
    name: 'DatabaseStartError',
    message: /nothing accepts connections at 127\.0\.0\.1:1/,
  });
});

t.test('loadConfig(source, true) also reads .env from the working directory; the environment wins', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pack-dotenv-test-'));
  const previous = process.cwd();
  t.teardown(() => {
    process.chdir(previous);
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(
    join(dir, '.env'),
    [
      '# a comment',
      'PORT=4100',
      'LOG_LEVEL=debug',
      'DATABASE_URL=',
      'REDIS_URL=',
      'RATE_LIMIT_MAX="7"',
      "RATE_LIMIT_WINDOW='10 seconds'",
      'TRUST_PROXY=1',
      '',
    ].join('\n'),
  );
  process.chdir(dir);

  const config = loadConfig({ PORT: '5100', TRUST_PROXY: '2' }, true);
  t.equal(config.port, 5100, 'the environment wins over .env');
  t.equal(config.trustProxy, 2, 'the environment wins over .env');
  t.equal(config.logLevel, 'debug', 'a value only in .env is used');
  t.same(config.rateLimit, { max: 7, windowMs: 10_000 }, 'quoted .env values are unquoted');
  t.equal(config.databaseUrl, undefined, 'an empty DATABASE_URL= line counts as unset, not as an invalid URL');
  t.equal(config.redisUrl, undefined, 'an empty REDIS_URL= line counts as unset');

  // An environment value fills an empty .env line.
  t.equal(loadConfig({ DATABASE_URL: 'postgres://u@db:5432/x' }, true).databaseUrl, 'postgres://u@db:5432/x');
  // Without the second argument .env is not read at all.
  const plain = loadConfig({});
  t.equal(plain.port, 3000);
  t.equal(plain.logLevel, 'info');
  // A bad value in .env is refused by name like any other.
  writeFileSync(join(dir, '.env'), 'PORT=not-a-port\n');
  let thrown: unknown;
  try {
    loadConfig({}, true);
  } catch (error) {
    thrown = error;
  }
  t.ok(thrown instanceof ConfigError);
  t.match((thrown as Error).message, /^Invalid configuration: PORT\b/);
  t.equal(loadConfig({ PORT: '6000' }, true).port, 6000, 'unless the environment overrides it');

  // No .env file: only the environment.
  rmSync(join(dir, '.env'));
  t.equal(loadConfig({ LOG_LEVEL: 'warn' }, true).logLevel, 'warn');
  t.equal(loadConfig({}, true).port, 3000);
});

/** Runs the real server entry and returns its exit code and stderr (it must exit by itself). */
function runServer(env: Env, cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, nodeArgsFor('server.ts'), {
      cwd, // no .env there
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`server.ts did not exit within 20 s; stderr: ${stderr}`));
    }, 20_000);
    child.on('error', fail);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

t.test('server.ts prints the configuration error and exits 1', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pack-env-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'data');

  const [badPort, noKey] = await Promise.all([
    runServer({ PORT: 'abc', DATA_DIR: dataDir }, dir),
    runServer({ NODE_ENV: 'production', DATA_DIR: dataDir }, dir),
  ]);
  t.equal(badPort.code, 1);
  t.match(badPort.stderr, /Invalid configuration: PORT must be integer/);
  t.equal(noKey.code, 1);
  t.match(noKey.stderr, /Invalid configuration: AUTH_JWT_SECRET is required unless/);
  t.notMatch(badPort.stderr + noKey.stderr, /at .*\.ts:\d+/, 'a message, not a stack trace');
  t.notOk(existsSync(dataDir), 'no database was created');
});

t.test('sessions of our own: when they are on, and what they need', async (t) => {
  const key = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const prod = { NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(40) };
  t.ok(loadConfig({}).sessions, 'development: on, with a generated key');
  t.equal(loadConfig({}).sessions?.issuer, 'http://localhost:3000', 'the dev issuer is DEV_BASE_URL');
  t.equal(loadConfig(prod).sessions, null, 'production without a key: off, as before');
  t.equal(loadConfig({ AUTH_SESSIONS: 'false' }).sessions, null, 'development can turn them off');
  t.throws(() => loadConfig({ ...prod, AUTH_SESSIONS: 'true' }), {
    message: /AUTH_SESSION_PRIVATE_KEY is required when sessions are on/,
  });
  t.throws(() => loadConfig({ ...prod, AUTH_SESSION_PRIVATE_KEY: key }), {
    message: /PUBLIC_BASE_URL is required when sessions are on/,
  });
  const on = loadConfig({ ...prod, AUTH_SESSION_PRIVATE_KEY: key, PUBLIC_BASE_URL: 'https://api.example.com/' });
  t.equal(on.sessions?.issuer, 'https://api.example.com', 'the issuer without a trailing slash');
  t.match(on.sessions, {
    accessTtlMs: 600_000,
    sessionTtlMs: 60 * 86_400_000,
    providers: {},
    rateLimit: { perIp: 60, perSubject: 30 },
  });
  t.throws(
    () =>
      loadConfig({
        ...prod,
        AUTH_SESSION_PRIVATE_KEY: key,
        PUBLIC_BASE_URL: 'https://api.example.com',
        AUTH_JWT_ISSUER: 'https://api.example.com/',
      }),
    {
      message: /AUTH_JWT_ISSUER names the service's own URL/,
    },
  );
  t.throws(() => loadConfig({ AUTH_ACCESS_TTL: '1 hour', AUTH_SESSION_TTL: '10 minutes' }), {
    message: /AUTH_SESSION_TTL must be at least AUTH_ACCESS_TTL/,
  });
  const google = loadConfig({
    AUTH_GOOGLE_CLIENT_IDS: 'web.apps.googleusercontent.com, ios.apps.googleusercontent.com',
  }).sessions?.providers.google;
  t.same(google?.clientIds, ['web.apps.googleusercontent.com', 'ios.apps.googleusercontent.com']);
  t.same(
    google?.issuers,
    ['https://accounts.google.com', 'accounts.google.com'],
    "Google's two spellings of its issuer",
  );
  t.equal(loadConfig({}).sessions?.providers.apple, undefined, 'a provider without client ids is off');
});

t.test('checkout: all of the Stripe values or none', async (t) => {
  const full = {
    STRIPE_SECRET_KEY: 'sk_test_x',
    STRIPE_WEBHOOK_SECRET: 'whsec_x',
    CHECKOUT_SUCCESS_URL: 'https://app.example.com/ok',
    CHECKOUT_CANCEL_URL: 'https://app.example.com/no',
  };
  t.equal(loadConfig({}).checkout, null, 'none: off');
  t.match(loadConfig(full).checkout, {
    secretKey: 'sk_test_x',
    webhookSecret: 'whsec_x',
    ttlMs: 30 * 60_000,
    apiBase: undefined,
  });
  t.equal(loadConfig({ ...full, STRIPE_API_BASE: 'http://127.0.0.1:12111' }).checkout?.apiBase?.port, '12111');
  t.throws(() => loadConfig({ STRIPE_SECRET_KEY: 'sk_test_x' }), {
    message: /STRIPE_WEBHOOK_SECRET and CHECKOUT_SUCCESS_URL and CHECKOUT_CANCEL_URL must be set too/,
  });
  t.throws(() => loadConfig({ ...full, CHECKOUT_TTL: '10 minutes' }), {
    message: /CHECKOUT_TTL must be between 30 minutes and 24 hours/,
  });
  t.throws(() => loadConfig({ ...full, CHECKOUT_TTL: '2 days' }), { message: /CHECKOUT_TTL/ });
  t.throws(() => loadConfig({ ...full, CHECKOUT_SUCCESS_URL: 'javascript:alert(1)' }), { name: 'ConfigError' });
});
