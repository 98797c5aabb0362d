import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError } from '../../../config/index.js';

/**
 * The keys that sign and verify the service's own access tokens: the current one (signs) and,
 * after a rotation, the previous one (still verifies until its last tokens expire). Both are
 * published at /.well-known/jwks.json, each under its RFC 7638 thumbprint as `kid`.
 */

export type SessionAlgorithm = 'EdDSA' | 'ES256';

export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  kid: string;
  alg: SessionAlgorithm;
  use: 'sig';
}

export interface VerificationKey {
  kid: string;
  algorithm: SessionAlgorithm;
  publicKeyPem: string;
  jwk: PublicJwk;
}

export interface SigningKey extends VerificationKey {
  privateKeyPem: string;
}

export interface SessionKeyring {
  current: SigningKey;
  previous?: VerificationKey;
  /** By kid: the keys a token may name. */
  byKid: ReadonlyMap<string, VerificationKey>;
}

export const DEV_KEY_FILE = 'session-signing-key.pem';

function algorithmOf(key: KeyObject, variable: string): SessionAlgorithm {
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  throw new ConfigError(
    variable,
    `is a ${key.asymmetricKeyType} key${key.asymmetricKeyType === 'ec' ? ` on ${key.asymmetricKeyDetails?.namedCurve}` : ''}; use Ed25519 (EdDSA) or EC P-256 (ES256)`,
  );
}

/** RFC 7638: the SHA-256 of the key's required members in lexicographic order. */
export function thumbprint(jwk: { kty: string; crv: string; x: string; y?: string }): string {
  const members =
    jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

function verificationKey(publicKey: KeyObject, variable: string): VerificationKey {
  const algorithm = algorithmOf(publicKey, variable);
  const exported = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string; y?: string };
  const kid = thumbprint(exported);
  return {
    kid,
    algorithm,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    jwk: {
      kty: exported.kty,
      crv: exported.crv,
      x: exported.x,
      ...(exported.y ? { y: exported.y } : {}),
      kid,
      alg: algorithm,
      use: 'sig',
    },
  };
}

export function signingKeyFromPem(pem: string, variable = 'AUTH_SESSION_PRIVATE_KEY'): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new ConfigError(variable, 'is not a readable PEM private key (PKCS#8, Ed25519 or EC P-256)');
  }
  return {
    ...verificationKey(createPublicKey(privateKey), variable),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** The previous key may be given as its public or its private PEM; only the public part is kept. */
export function verificationKeyFromPem(pem: string, variable = 'AUTH_SESSION_PREVIOUS_KEY'): VerificationKey {
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey(pem);
  } catch {
    throw new ConfigError(variable, 'is not a readable PEM key');
  }
  return verificationKey(publicKey, variable);
}

export function generateSigningKeyPem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/**
 * The development key: read from DATA_DIR, or generated there on first start (written to a
 * temporary file and renamed, so a concurrent start never reads half a key). With a throwaway
 * DATA_DIR the key lives as long as the process.
 */
async function developmentKeyPem(dataDir: string): Promise<{ pem: string; generated: boolean; path?: string }> {
  if (dataDir.startsWith('memory://')) return { pem: generateSigningKeyPem(), generated: true };
  const folder = resolve(dataDir);
  const path = join(folder, DEV_KEY_FILE);
  try {
    return { pem: await readFile(path, 'utf8'), generated: false, path };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(folder, { recursive: true });
  const pem = generateSigningKeyPem();
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, pem, { mode: 0o600 });
  await rename(temporary, path);
  return { pem, generated: true, path };
}

export async function loadSessionKeyring(
  keys: { privateKeyPem?: string; previousKeyPem?: string },
  dataDir: string,
  log: { warn(object: object, message: string): void },
): Promise<SessionKeyring> {
  let currentPem = keys.privateKeyPem;
  if (!currentPem) {
    const dev = await developmentKeyPem(dataDir);
    log.warn(
      { path: dev.path ?? 'memory', generated: dev.generated },
      'AUTH_SESSION_PRIVATE_KEY is not set: sessions are signed with a development key. Set a key of your own in production.',
    );
    currentPem = dev.pem;
  }
  const current = signingKeyFromPem(currentPem);
  const previous = keys.previousKeyPem ? verificationKeyFromPem(keys.previousKeyPem) : undefined;
  const byKid = new Map<string, VerificationKey>([[current.kid, current]]);
  if (previous && previous.kid !== current.kid) byKid.set(previous.kid, previous);
  return { current, previous: previous && previous.kid !== current.kid ? previous : undefined, byKid };
}
