import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEV_DEFAULTS_RULE } from './defaults.js';
import { allOrNone, ConfigError } from './errors.js';
import { PROJECT_ROOT } from './project-root.js';
import type { Env } from './schema.js';

/** App Store purchases: on when APPLE_BUNDLE_ID is set. */

export const APPLE_ENVIRONMENTS = ['Production', 'Sandbox', 'LocalTesting', 'Xcode'] as const;
export type AppleEnvironment = (typeof APPLE_ENVIRONMENTS)[number];

export interface AppleApiConfig {
  keyId: string;
  issuerId: string;
  /** The App Store Connect API key (`.p8`, PKCS #8 PEM, an EC P-256 key). */
  privateKeyPem: string;
  /** Where the App Store Server API is reached: Apple's (by environment), or a stand-in. */
  baseUrl?: string;
}

export interface AppleConfig {
  bundleId: string;
  /** The app's Apple ID; Apple requires it to verify production notifications. */
  appAppleId?: number;
  environment: AppleEnvironment;
  /** DER root certificates that signed data must chain to. */
  rootCertificates: Buffer[];
  /** The App Store Server API (notification history, consumption information); null: not configured. */
  api: AppleApiConfig | null;
}

/**
 * Apple Root CA - G3, the root StoreKit 2 and App Store Server Notifications chain to, shipped with
 * the service (SHA-256 63:34:3A:BF:…:3E:91:79, as Apple publishes it; a test checks the file).
 */
export const SHIPPED_APPLE_ROOTS = [join(PROJECT_ROOT, 'config', 'apple-roots', 'AppleRootCA-G3.pem')];

/** A certificate file, PEM or DER, as DER; a file that is neither stops the start. */
function readCertificate(path: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new ConfigError(
      'APPLE_ROOT_CERTIFICATES',
      `names ${path}, which cannot be read (${(error as Error).message})`,
    );
  }
  try {
    return new X509Certificate(bytes).raw;
  } catch {
    throw new ConfigError('APPLE_ROOT_CERTIFICATES', `names ${path}, which is not a PEM or DER certificate`);
  }
}

/** A PEM given in the variable itself, or the path of a file holding it. */
function readKey(value: string): string {
  const pem = value.includes('-----BEGIN') ? value.replace(/\\n/g, '\n') : readKeyFile(value);
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
      throw new Error('not P-256');
  } catch {
    throw new ConfigError(
      'APPLE_API_PRIVATE_KEY',
      'is not an App Store Connect API key (an EC P-256 private key in PEM)',
    );
  }
  return pem;
}

function readKeyFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      'APPLE_API_PRIVATE_KEY',
      `is neither a PEM nor a readable file (${(error as Error).message})`,
    );
  }
}

function resolveApi(env: Env): AppleApiConfig | null {
  const values = {
    APPLE_API_KEY_ID: env.APPLE_API_KEY_ID,
    APPLE_API_ISSUER_ID: env.APPLE_API_ISSUER_ID,
    APPLE_API_PRIVATE_KEY: env.APPLE_API_PRIVATE_KEY,
  };
  if (!allOrNone(values, 'the App Store Server API')) return null;
  return {
    keyId: values.APPLE_API_KEY_ID as string,
    issuerId: values.APPLE_API_ISSUER_ID as string,
    privateKeyPem: readKey(values.APPLE_API_PRIVATE_KEY as string),
    ...(env.APPLE_API_BASE ? { baseUrl: env.APPLE_API_BASE.replace(/\/+$/, '') } : {}),
  };
}

/**
 * On when APPLE_BUNDLE_ID is set. The local StoreKit environments (`LocalTesting`, `Xcode`) sign
 * with no Apple certificate at all, so the library skips verification for them: they are refused
 * outside the development defaults. Signed data chains to the shipped Apple root unless
 * APPLE_ROOT_CERTIFICATES names others (tests name a CA of their own).
 */
export function resolveApple(env: Env, devDefaults: boolean): AppleConfig | null {
  const bundleId = env.APPLE_BUNDLE_ID || undefined;
  if (!bundleId) return null;
  const environment = env.APPLE_ENVIRONMENT;
  const local = environment === 'LocalTesting' || environment === 'Xcode';
  if (local && !devDefaults)
    throw new ConfigError(
      'APPLE_ENVIRONMENT',
      `${environment} data is not signed by Apple and is accepted unverified: it is for development only (${DEV_DEFAULTS_RULE})`,
    );
  if (environment === 'Production' && env.APPLE_APP_APPLE_ID === undefined)
    throw new ConfigError(
      'APPLE_APP_APPLE_ID',
      'is required with APPLE_ENVIRONMENT=Production (Apple signs it into production notifications)',
    );
  const named = (env.APPLE_ROOT_CERTIFICATES ?? '')
    .split(',')
    .map((path) => path.trim())
    .filter(Boolean);
  const paths = named.length > 0 ? named : SHIPPED_APPLE_ROOTS;
  return {
    bundleId,
    ...(env.APPLE_APP_APPLE_ID !== undefined ? { appAppleId: env.APPLE_APP_APPLE_ID } : {}),
    environment,
    rootCertificates: paths.map(readCertificate),
    api: resolveApi(env),
  };
}
