import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../config/index.js';

// GOOGLE_*: Google Play is off unless both the package and the service account key are set; the
// key is the JSON itself or a path; the push needs its audience and service account together.

const rsaPem = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const key = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'service_account',
    client_email: 'reader@project.iam.gserviceaccount.com',
    private_key: rsaPem(),
    private_key_id: 'abc123',
    ...fields,
  });

function failure(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    return (error as Error).message;
  }
  return 'started';
}

t.test('off when neither is set; the defaults point at Google', async (t) => {
  t.equal(loadConfig({}).googlePlay, null);
  const config = loadConfig({ GOOGLE_PLAY_PACKAGE_NAME: 'com.example.packs', GOOGLE_SERVICE_ACCOUNT_KEY: key() });
  t.match(config.googlePlay, {
    packageName: 'com.example.packs',
    serviceAccount: { clientEmail: 'reader@project.iam.gserviceaccount.com', privateKeyId: 'abc123' },
    pubsub: null,
  });
  t.equal(config.googlePlay?.apiBase.href, 'https://androidpublisher.googleapis.com/');
  t.equal(config.googlePlay?.tokenUrl.href, 'https://oauth2.googleapis.com/token');
});

t.test('the key may be a path to the JSON file, with escaped newlines in its PEM', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'google-key-'));
  const path = join(folder, 'key.json');
  writeFileSync(path, key({ private_key: rsaPem().replace(/\n/g, '\\n') }));
  const config = loadConfig({ GOOGLE_PLAY_PACKAGE_NAME: 'com.example.packs', GOOGLE_SERVICE_ACCOUNT_KEY: path });
  t.match(config.googlePlay?.serviceAccount.privateKeyPem, /^-----BEGIN PRIVATE KEY-----\n/);
});

t.test('the push: audience and service account together, keys from Google by default', async (t) => {
  const config = loadConfig({
    GOOGLE_PLAY_PACKAGE_NAME: 'com.example.packs',
    GOOGLE_SERVICE_ACCOUNT_KEY: key(),
    GOOGLE_PUBSUB_AUDIENCE: 'https://packs.example.com/api/webhooks/google',
    GOOGLE_PUBSUB_SERVICE_ACCOUNT: 'push@project.iam.gserviceaccount.com',
  });
  t.equal(config.googlePlay?.pubsub?.certsUrl.href, 'https://www.googleapis.com/oauth2/v3/certs');
  t.match(failure({ GOOGLE_PUBSUB_AUDIENCE: 'x' }), /GOOGLE_PUBSUB_SERVICE_ACCOUNT must be set too/);
});

t.test('what cannot work stops the start, naming the variable', async (t) => {
  t.match(failure({ GOOGLE_PLAY_PACKAGE_NAME: 'com.example.packs' }), /GOOGLE_SERVICE_ACCOUNT_KEY must be set too/);
  t.match(failure({ GOOGLE_SERVICE_ACCOUNT_KEY: key() }), /GOOGLE_PLAY_PACKAGE_NAME must be set too/);
  t.match(
    failure({ GOOGLE_PLAY_PACKAGE_NAME: 'not a package', GOOGLE_SERVICE_ACCOUNT_KEY: key() }),
    /GOOGLE_PLAY_PACKAGE_NAME/,
  );
  const base = { GOOGLE_PLAY_PACKAGE_NAME: 'com.example.packs' };
  t.match(
    failure({ ...base, GOOGLE_SERVICE_ACCOUNT_KEY: '/no/such/key.json' }),
    /GOOGLE_SERVICE_ACCOUNT_KEY is neither/,
  );
  t.match(
    failure({ ...base, GOOGLE_SERVICE_ACCOUNT_KEY: '{not json' }),
    /GOOGLE_SERVICE_ACCOUNT_KEY is not valid JSON/,
  );
  t.match(failure({ ...base, GOOGLE_SERVICE_ACCOUNT_KEY: '{"type":"service_account"}' }), /no client_email/);
  t.match(failure({ ...base, GOOGLE_SERVICE_ACCOUNT_KEY: key({ private_key: 'nope' }) }), /not a readable PEM/);
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
  t.match(failure({ ...base, GOOGLE_SERVICE_ACCOUNT_KEY: key({ private_key: ec.toString() }) }), /not an RSA key/);
  t.match(failure({ GOOGLE_PLAY_API_BASE: 'ftp://x' }), /GOOGLE_PLAY_API_BASE/);
});
