import { createVerifier } from 'fast-jwt';
import type { GooglePubSubConfig } from '../../../config/index.js';
import { CLOCK_TOLERANCE_MS, headerProblem, issuedInFuture } from '../auth/tokens.js';
import { createJwksKeyResolver, JwksUnavailableError } from '../auth/jwks.js';

/**
 * Verifies the OIDC token Pub/Sub puts on each push (`Authorization: Bearer …`) the way mobile
 * sign-in verifies Google's ID tokens: the signature through Google's keys (the configured URL
 * only, cached, new key ids throttled), the issuer, the configured audience, the expiry, and the
 * push subscription's service account as a verified `email`.
 */

/** Google signs its OIDC tokens with RS256, under either spelling of its issuer. */
const ALGORITHMS = ['RS256'];
const ISSUERS = ['https://accounts.google.com', 'accounts.google.com'];
const BEARER_PATTERN = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/;

/** The push was refused; why is logged, never told to the caller. */
export class PushTokenRejected extends Error {
  readonly missing: boolean;
  constructor(message: string, missing = false) {
    super(message);
    this.missing = missing;
  }
}
export { JwksUnavailableError };

export type PushVerifier = (authorization: string | undefined) => Promise<void>;

export async function createPushVerifier(config: GooglePubSubConfig, lookupIntervalMs: number): Promise<PushVerifier> {
  const resolveKey = await createJwksKeyResolver({ jwksUrl: config.certsUrl, lookupIntervalMs });
  const verifier = createVerifier({
    key: async (decoded: { header: { kid?: unknown; alg?: unknown } }) => resolveKey(decoded.header),
    algorithms: ALGORITHMS as never,
    allowedIss: ISSUERS,
    allowedAud: [config.audience],
    requiredClaims: ['iss', 'aud', 'exp', 'iat', 'email'],
    clockTolerance: CLOCK_TOLERANCE_MS,
  });

  return async (authorization) => {
    if (!authorization) throw new PushTokenRejected('no Authorization header', true);
    const token = BEARER_PATTERN.exec(authorization)?.[1];
    if (!token) throw new PushTokenRejected('the Authorization header is not a bearer JWT');
    const problem = headerProblem(token, ALGORITHMS);
    if (problem) throw new PushTokenRejected(problem);
    let claims: Record<string, unknown>;
    try {
      claims = (await verifier(token)) as Record<string, unknown>;
    } catch (error) {
      // fast-jwt wraps what the key callback throws.
      const cause = (error as { originalError?: unknown }).originalError ?? error;
      if (cause instanceof JwksUnavailableError) throw cause;
      throw new PushTokenRejected((error as Error).message);
    }
    if (issuedInFuture(claims.iat)) throw new PushTokenRejected('the token was issued in the future');
    if (claims.email !== config.serviceAccount)
      throw new PushTokenRejected(`the token is signed for ${String(claims.email)}, not the push's service account`);
    if (claims.email_verified !== true && claims.email_verified !== 'true')
      throw new PushTokenRejected('the service account email is not verified');
  };
}
