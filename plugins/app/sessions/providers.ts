import { createVerifier } from 'fast-jwt';
import type { ProviderConfig } from '../../../config/index.js';
import type { MobileProvider } from '../../../schemas/enums.js';
import { CLOCK_TOLERANCE_MS, headerProblem, issuedInFuture } from '../auth/tokens.js';
import { createJwksKeyResolver, JwksUnavailableError } from '../auth/jwks.js';
import { cleanDisplayName, subjectProblem } from '../auth/rules.js';
import type { ProviderProfile } from './repository.js';
import { emailVerifiedClaim, nonceMatches, signedPartHash } from './rules.js';

/**
 * Verifies the ID tokens of Sign in with Apple and Google Sign-In: the signature through the
 * provider's JWKS (from the configuration, cached, new key ids throttled), the issuer, the audience
 * (one of our client ids), the expiry and the nonce. `email_verified` is profile data only.
 */

/** Both providers sign ID tokens with RS256. */
const PROVIDER_ALGORITHMS = ['RS256'];
const ID_TOKEN_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The ID token was refused; why is logged, never told to the caller. */
export class IdTokenRejected extends Error {}
export { JwksUnavailableError };

export type IdTokenVerifier = (idToken: string, rawNonce: string) => Promise<ProviderProfile>;

function displayNameOf(provider: MobileProvider, claims: Record<string, unknown>): string {
  for (const name of ['name', 'given_name', 'email']) {
    const value = claims[name];
    if (typeof value === 'string' && cleanDisplayName(value) !== '') return cleanDisplayName(value);
  }
  return provider === 'apple' ? 'Apple user' : 'Google user';
}

export async function createIdTokenVerifier(
  config: ProviderConfig,
  lookupIntervalMs: number,
): Promise<IdTokenVerifier> {
  const resolveKey = await createJwksKeyResolver({ jwksUrl: config.jwksUrl, lookupIntervalMs });
  const verifier = createVerifier({
    key: async (decoded: { header: { kid?: unknown; alg?: unknown } }) => resolveKey(decoded.header),
    algorithms: PROVIDER_ALGORITHMS as never,
    allowedIss: config.issuers,
    allowedAud: config.clientIds,
    requiredClaims: ['iss', 'aud', 'sub', 'exp', 'iat'],
    clockTolerance: CLOCK_TOLERANCE_MS,
  });

  return async (idToken, rawNonce) => {
    if (!ID_TOKEN_PATTERN.test(idToken)) throw new IdTokenRejected('not a compact JWS');
    const problem = headerProblem(idToken, PROVIDER_ALGORITHMS);
    if (problem) throw new IdTokenRejected(problem);
    let claims: Record<string, unknown>;
    try {
      claims = (await verifier(idToken)) as Record<string, unknown>;
    } catch (error) {
      // fast-jwt wraps what the key callback throws.
      const cause = (error as { originalError?: unknown }).originalError ?? error;
      if (cause instanceof JwksUnavailableError) throw cause;
      throw new IdTokenRejected((error as Error).message);
    }
    if (typeof claims.exp !== 'number') throw new IdTokenRejected('the expiry is not a number');
    if (issuedInFuture(claims.iat)) throw new IdTokenRejected('the token was issued in the future');
    const subject = subjectProblem(claims.sub);
    if (subject) throw new IdTokenRejected(subject);
    if (!nonceMatches(config.provider, claims.nonce, rawNonce))
      throw new IdTokenRejected('the nonce is missing or does not match');
    return {
      provider: config.provider,
      tokenHash: signedPartHash(idToken),
      expiresAt: new Date(claims.exp * 1000 + CLOCK_TOLERANCE_MS),
      subject: claims.sub as string,
      email: typeof claims.email === 'string' ? claims.email.slice(0, 320) : null,
      emailVerified: emailVerifiedClaim(claims.email_verified),
      displayName: displayNameOf(config.provider, claims),
    };
  };
}
