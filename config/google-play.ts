import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';
import type { Env } from './schema.js';

/** Google Play purchases: the Android app, the service account that reads them, and the notifications push. */

/** The service account the Play Developer API is called as: from its JSON key. */
export interface GoogleServiceAccount {
  clientEmail: string;
  /** PEM (PKCS #8) RSA private key that signs the OAuth assertions. */
  privateKeyPem: string;
  privateKeyId?: string;
}

/** Real-time developer notifications pushed by Pub/Sub: what their OIDC token must say. */
export interface GooglePubSubConfig {
  /** The `aud` the push subscription puts in its tokens. */
  audience: string;
  /** The `email` of the service account the push subscription signs as. */
  serviceAccount: string;
  /** Where Google's OIDC signing keys are fetched (a stand-in in tests). */
  certsUrl: URL;
}

export interface GooglePlayConfig {
  packageName: string;
  serviceAccount: GoogleServiceAccount;
  /** The Android Publisher API's origin: Google's, or a local stand-in. */
  apiBase: URL;
  /** Where the service account's assertion is exchanged for an access token. */
  tokenUrl: URL;
  /** Null when the push is not configured: the notifications endpoint answers 503. */
  pubsub: GooglePubSubConfig | null;
}

const KEY_VARIABLE = 'GOOGLE_SERVICE_ACCOUNT_KEY';

/** The JSON key itself, or the path of a file holding it. */
export function readServiceAccountKey(value: string): GoogleServiceAccount {
  const text = value.trim();
  let json: string;
  if (text.startsWith('{')) json = text;
  else {
    try {
      json = readFileSync(text, 'utf8');
    } catch (error) {
      throw new ConfigError(
        KEY_VARIABLE,
        `is neither a JSON key nor a readable file (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      );
    }
  }
  let key: Record<string, unknown>;
  try {
    key = JSON.parse(json);
  } catch {
    throw new ConfigError(KEY_VARIABLE, 'is not valid JSON: give the service account key file Google Cloud made');
  }
  if (typeof key.client_email !== 'string' || typeof key.private_key !== 'string')
    throw new ConfigError(KEY_VARIABLE, 'has no client_email or private_key: it must be a service account JSON key');
  const pem = key.private_key.replace(/\\n/g, '\n');
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    throw new ConfigError(KEY_VARIABLE, 'holds a private_key that is not a readable PEM key');
  }
  if (type !== 'rsa') throw new ConfigError(KEY_VARIABLE, 'holds a private_key that is not an RSA key');
  return {
    clientEmail: key.client_email,
    privateKeyPem: pem,
    ...(typeof key.private_key_id === 'string' ? { privateKeyId: key.private_key_id } : {}),
  };
}

/**
 * On when both the package name and the service account key are set (one without the other stops
 * the start). The push needs its audience and service account, both or neither.
 */
export function resolveGooglePlay(env: Env): GooglePlayConfig | null {
  const packageName = env.GOOGLE_PLAY_PACKAGE_NAME;
  const key = env.GOOGLE_SERVICE_ACCOUNT_KEY;
  const audience = env.GOOGLE_PUBSUB_AUDIENCE;
  const signer = env.GOOGLE_PUBSUB_SERVICE_ACCOUNT;
  if ((audience === undefined) !== (signer === undefined))
    throw new ConfigError(
      audience === undefined ? 'GOOGLE_PUBSUB_AUDIENCE' : 'GOOGLE_PUBSUB_SERVICE_ACCOUNT',
      'must be set too: the notifications push is checked against both its audience and its service account',
    );
  if (!packageName && !key) return null;
  if (!packageName || !key)
    throw new ConfigError(
      packageName ? KEY_VARIABLE : 'GOOGLE_PLAY_PACKAGE_NAME',
      'must be set too: Google Play purchases need GOOGLE_PLAY_PACKAGE_NAME and GOOGLE_SERVICE_ACCOUNT_KEY',
    );
  return {
    packageName,
    serviceAccount: readServiceAccountKey(key),
    apiBase: new URL(env.GOOGLE_PLAY_API_BASE),
    tokenUrl: new URL(env.GOOGLE_OAUTH_TOKEN_URL),
    pubsub:
      audience && signer ? { audience, serviceAccount: signer, certsUrl: new URL(env.GOOGLE_OIDC_CERTS_URL) } : null,
  };
}
