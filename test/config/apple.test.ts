import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../config/index.js';
import { createAppleCa } from '../support/apple-ca.js';

/** App Store configuration: off without a bundle id, and every half-made or unsafe setting refused by name. */

const dir = mkdtempSync(join(tmpdir(), 'apple-config-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const ca = createAppleCa();
const pem = join(dir, 'root.pem');
const der = join(dir, 'root.cer');
writeFileSync(pem, ca.rootPem);
writeFileSync(der, ca.root.der);
const junk = join(dir, 'junk.pem');
writeFileSync(junk, 'not a certificate');
const apiKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
}) as string;
const keyFile = join(dir, 'AuthKey.p8');
writeFileSync(keyFile, apiKey);

const production = { NODE_ENV: 'production', HOST: '0.0.0.0', AUTH_JWT_SECRET: 'x'.repeat(40), AUTH_SESSIONS: 'false' };
const apple = {
  APPLE_BUNDLE_ID: 'com.example.packs',
  APPLE_APP_APPLE_ID: '1234',
  APPLE_ROOT_CERTIFICATES: `${pem}, ${der}`,
};

t.test('off without a bundle id; on with roots in PEM and DER', async (t) => {
  t.equal(loadConfig({}).apple, null);
  const config = loadConfig({ ...production, ...apple }).apple;
  t.match(config, { bundleId: 'com.example.packs', appAppleId: 1234, environment: 'Production', api: null });
  t.equal(config?.rootCertificates.length, 2);
  t.same(config?.rootCertificates[0], ca.root.der, 'PEM read as DER');
  t.same(config?.rootCertificates[1], ca.root.der);
});

t.test('without APPLE_ROOT_CERTIFICATES, the shipped root: Apple Root CA - G3 as Apple publishes it', async (t) => {
  for (const roots of [{}, { APPLE_ROOT_CERTIFICATES: '' }]) {
    const { APPLE_ROOT_CERTIFICATES: _named, ...withoutRoots } = apple;
    const config = loadConfig({ ...production, ...withoutRoots, ...roots }).apple;
    t.equal(config?.rootCertificates.length, 1);
    const root = new X509Certificate(config?.rootCertificates[0] as Buffer);
    t.match(root.subject, /CN=Apple Root CA - G3/);
    t.equal(
      root.fingerprint256,
      '63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79',
      'the fingerprint Apple publishes at apple.com/certificateauthority',
    );
    t.ok(root.checkIssued(root) && root.verify(root.publicKey), 'self-signed');
  }
});

t.test('refusals name their variable', async (t) => {
  const refused = (env: Record<string, string>, variable: RegExp) =>
    t.throws(() => loadConfig({ ...production, ...apple, ...env }), { name: 'ConfigError', message: variable });
  refused({ APPLE_ROOT_CERTIFICATES: join(dir, 'missing.pem') }, /APPLE_ROOT_CERTIFICATES names .*missing/);
  refused({ APPLE_ROOT_CERTIFICATES: junk }, /APPLE_ROOT_CERTIFICATES names .* not a PEM or DER/);
  refused({ APPLE_APP_APPLE_ID: '' }, /APPLE_APP_APPLE_ID is required/);
  refused({ APPLE_ENVIRONMENT: 'LocalTesting' }, /APPLE_ENVIRONMENT LocalTesting .* development only/);
  refused({ APPLE_ENVIRONMENT: 'Xcode' }, /APPLE_ENVIRONMENT Xcode/);
  refused({ APPLE_ENVIRONMENT: 'Staging' }, /APPLE_ENVIRONMENT/);
  refused({ APPLE_API_KEY_ID: 'K' }, /APPLE_API_ISSUER_ID and APPLE_API_PRIVATE_KEY must be set too/);
  refused(
    { APPLE_API_KEY_ID: 'K', APPLE_API_ISSUER_ID: 'I', APPLE_API_PRIVATE_KEY: 'no-such-file.p8' },
    /APPLE_API_PRIVATE_KEY is neither a PEM nor a readable file/,
  );
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
  refused(
    { APPLE_API_KEY_ID: 'K', APPLE_API_ISSUER_ID: 'I', APPLE_API_PRIVATE_KEY: rsa as string },
    /APPLE_API_PRIVATE_KEY is not an App Store Connect API key/,
  );
});

t.test('the local StoreKit environments only with the development defaults; Sandbox anywhere', async (t) => {
  t.equal(
    loadConfig({ APPLE_BUNDLE_ID: 'com.example.packs', APPLE_ENVIRONMENT: 'LocalTesting' }).apple?.environment,
    'LocalTesting',
  );
  t.equal(
    loadConfig({ ...production, ...apple, APPLE_ENVIRONMENT: 'Sandbox', APPLE_APP_APPLE_ID: '' }).apple?.environment,
    'Sandbox',
    'Sandbox needs no app Apple id',
  );
  const api = loadConfig({
    ...production,
    ...apple,
    APPLE_API_KEY_ID: 'K',
    APPLE_API_ISSUER_ID: 'I',
    APPLE_API_PRIVATE_KEY: keyFile,
    APPLE_API_BASE: 'http://127.0.0.1:9/',
  }).apple?.api;
  t.match(api, { keyId: 'K', issuerId: 'I', baseUrl: 'http://127.0.0.1:9' });
  t.match(api?.privateKeyPem, /BEGIN PRIVATE KEY/, 'a key read from its file');
});
