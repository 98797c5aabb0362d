import { createPrivateKey, createPublicKey } from 'node:crypto';
import { DEV_DEFAULTS_RULE, DEV_JWT_SECRET } from './defaults.js';
import { ConfigError } from './errors.js';
import type { Env } from './schema.js';
import { parseDuration } from './units.js';

/**
 * The key that verifies the external identity provider's tokens: exactly one of a secret, a PEM
 * public key (its algorithm read from the key itself) or a JWKS URL.
 */

const MIN_PRODUCTION_SECRET_LENGTH = 32;

export type KeySource =
  | { kind: 'secret'; secret: string; algorithms: ['HS256']; isDevSecret: boolean }
  | { kind: 'publicKey'; publicKeyPem: string; algorithms: string[] }
  | { kind: 'jwks'; jwksUrl: URL; algorithms: string[]; lookupIntervalMs: number };

/** PEM text as given, or with literal "\n" escapes, as environment files often carry it. */
function algorithmsForPublicKey(pem: string): { publicKeyPem: string; algorithms: string[] } {
  const text = pem.trim().replace(/\\n/g, '\n');
  let key: ReturnType<typeof createPublicKey>;
  try {
    key = createPublicKey(text);
  } catch {
    throw new ConfigError('AUTH_JWT_PUBLIC_KEY', 'is not a readable PEM public key');
  }
  if (isPrivateKey(text)) {
    throw new ConfigError(
      'AUTH_JWT_PUBLIC_KEY',
      'holds a private key: give the public key only; the private key must not leave the identity provider',
    );
  }
  // Re-export in canonical SPKI form so no stray prefix can make the verifier mistake it for an HMAC secret.
  const publicKeyPem = key.export({ type: 'spki', format: 'pem' }).toString();
  switch (key.asymmetricKeyType) {
    case 'rsa':
      if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
        throw new ConfigError('AUTH_JWT_PUBLIC_KEY', 'is an RSA key shorter than 2048 bits');
      }
      return { publicKeyPem, algorithms: ['RS256'] };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      const algorithm = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[curve ?? ''];
      if (!algorithm) throw new ConfigError('AUTH_JWT_PUBLIC_KEY', `uses the unsupported curve ${curve}`);
      return { publicKeyPem, algorithms: [algorithm] };
    }
    case 'ed25519':
      return { publicKeyPem, algorithms: ['EdDSA'] };
    default:
      throw new ConfigError('AUTH_JWT_PUBLIC_KEY', `is a ${key.asymmetricKeyType} key; use RSA, EC or Ed25519`);
  }
}

function isPrivateKey(text: string): boolean {
  try {
    createPrivateKey(text);
    return true;
  } catch {
    return false;
  }
}

export function resolveKeySource(env: Env, devDefaults: boolean): KeySource {
  const secret = env.AUTH_JWT_SECRET || undefined;
  const pem = env.AUTH_JWT_PUBLIC_KEY || undefined;
  const jwks = env.AUTH_JWKS_URL || undefined;
  const configured = [secret && 'AUTH_JWT_SECRET', pem && 'AUTH_JWT_PUBLIC_KEY', jwks && 'AUTH_JWKS_URL'].filter(
    Boolean,
  );
  if (configured.length > 1) {
    throw new ConfigError(configured.join(' and '), 'are both set: configure exactly one key source');
  }
  if (pem) return { kind: 'publicKey', ...algorithmsForPublicKey(pem) };
  if (jwks) {
    return {
      kind: 'jwks',
      jwksUrl: new URL(jwks),
      algorithms: ['RS256', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      lookupIntervalMs: parseDuration('AUTH_JWKS_LOOKUP_INTERVAL', env.AUTH_JWKS_LOOKUP_INTERVAL),
    };
  }
  if (secret) {
    if (!devDefaults && (secret.length < MIN_PRODUCTION_SECRET_LENGTH || secret === DEV_JWT_SECRET)) {
      throw new ConfigError(
        'AUTH_JWT_SECRET',
        `must be at least ${MIN_PRODUCTION_SECRET_LENGTH} characters and not the public dev secret (${DEV_DEFAULTS_RULE})`,
      );
    }
    return { kind: 'secret', secret, algorithms: ['HS256'], isDevSecret: secret === DEV_JWT_SECRET };
  }
  if (!devDefaults) {
    throw new ConfigError(
      'AUTH_JWT_SECRET',
      `is required unless AUTH_JWT_PUBLIC_KEY or AUTH_JWKS_URL is set: the public dev secret would let anyone mint an admin token (${DEV_DEFAULTS_RULE})`,
    );
  }
  return { kind: 'secret', secret: DEV_JWT_SECRET, algorithms: ['HS256'], isDevSecret: true };
}
