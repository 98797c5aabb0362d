import { DEV_DEFAULTS_RULE } from './defaults.js';
import { ConfigError } from './errors.js';
import type { Env } from './schema.js';
import { parseDuration, splitList } from './units.js';

/** The service's own sign-in and sessions: on or off, its issuer, key, lifetimes and providers. */

/** A sign-in provider with client ids: AUTH_APPLE_* or AUTH_GOOGLE_* (the API names them in MOBILE_PROVIDERS). */
export interface ProviderConfig {
  provider: keyof SessionsConfig['providers'];
  /** Accepted `aud` values: the app's client ids. */
  clientIds: string[];
  issuers: string[];
  jwksUrl: URL;
}

export interface SessionsConfig {
  /** `iss` (and `aud`) of the access tokens: the service's public URL. */
  issuer: string;
  /** PEM private key that signs access tokens; unset in development: generated into DATA_DIR. */
  privateKeyPem?: string;
  /** PEM (public or private) of the key used before the last rotation: its tokens stay valid until they expire. */
  previousKeyPem?: string;
  accessTtlMs: number;
  sessionTtlMs: number;
  /** Sign-in providers that are on (those with client ids). */
  providers: { apple?: ProviderConfig; google?: ProviderConfig };
  /** Calls per minute to the sign-in, token and revoke endpoints, per IP address and per subject. */
  rateLimit: { perIp: number; perSubject: number };
}

function provider(
  provider: ProviderConfig['provider'],
  clientIds: string | undefined,
  jwksUrl: string,
  issuers: string,
): ProviderConfig | undefined {
  const ids = splitList(clientIds);
  if (ids.length === 0) return undefined;
  return { provider, clientIds: ids, issuers: splitList(issuers), jwksUrl: new URL(jwksUrl) };
}

/**
 * Sessions are on in development, and elsewhere when asked for (AUTH_SESSIONS=true) or when a
 * signing key is given. Outside development they need a key and the public URL their tokens name.
 */
export function resolveSessions(env: Env, devDefaults: boolean): SessionsConfig | null {
  const privateKeyPem = env.AUTH_SESSION_PRIVATE_KEY || undefined;
  const enabled = env.AUTH_SESSIONS ?? (devDefaults || privateKeyPem !== undefined);
  if (!enabled) return null;
  if (!privateKeyPem && !devDefaults) {
    throw new ConfigError(
      'AUTH_SESSION_PRIVATE_KEY',
      `is required when sessions are on (AUTH_SESSIONS=false turns them off): a generated key is for development only (${DEV_DEFAULTS_RULE})`,
    );
  }
  const issuer = (env.PUBLIC_BASE_URL ?? (devDefaults ? env.DEV_BASE_URL : undefined))?.replace(/\/+$/, '');
  if (!issuer)
    throw new ConfigError(
      'PUBLIC_BASE_URL',
      'is required when sessions are on: it is the issuer (`iss`) of the access tokens',
    );
  if (env.AUTH_JWT_ISSUER && env.AUTH_JWT_ISSUER.replace(/\/+$/, '') === issuer) {
    throw new ConfigError(
      'AUTH_JWT_ISSUER',
      `names the service's own URL (${issuer}), which issues the session tokens: the two issuers must differ`,
    );
  }
  const accessTtlMs = parseDuration('AUTH_ACCESS_TTL', env.AUTH_ACCESS_TTL);
  const sessionTtlMs = parseDuration('AUTH_SESSION_TTL', env.AUTH_SESSION_TTL);
  if (sessionTtlMs < accessTtlMs) throw new ConfigError('AUTH_SESSION_TTL', 'must be at least AUTH_ACCESS_TTL');
  const providers: SessionsConfig['providers'] = {};
  const apple = provider('apple', env.AUTH_APPLE_CLIENT_IDS, env.AUTH_APPLE_JWKS_URL, env.AUTH_APPLE_ISSUER);
  const google = provider('google', env.AUTH_GOOGLE_CLIENT_IDS, env.AUTH_GOOGLE_JWKS_URL, env.AUTH_GOOGLE_ISSUER);
  if (apple) providers.apple = apple;
  if (google) providers.google = google;
  return {
    issuer,
    privateKeyPem: privateKeyPem?.trim().replace(/\\n/g, '\n'),
    previousKeyPem: env.AUTH_SESSION_PREVIOUS_KEY?.trim().replace(/\\n/g, '\n') || undefined,
    accessTtlMs,
    sessionTtlMs,
    providers,
    rateLimit: { perIp: env.AUTH_RATE_LIMIT_IP, perSubject: env.AUTH_RATE_LIMIT_SUBJECT },
  };
}
