import { createPublicKey, type JsonWebKey } from 'node:crypto';

/**
 * Public keys fetched from a JWKS URL given by the configuration (an identity provider's, Apple's,
 * Google's), cached by key id, with a throttle on key ids not yet known: tokens with made-up key
 * ids must not turn into one fetch each.
 */

/** Lookups of key ids that are not cached: a burst of 10, then one per lookup interval. */
const UNCACHED_LOOKUP_BURST = 10;
// Like jose's JWKS cooldown: a key id published within this window after a miss is refused until it ends.
const UNKNOWN_KID_MEMORY_MS = 30_000;
const UNKNOWN_KID_MEMORY_SIZE = 10_000;

/** The keys cannot be fetched now: the caller answers 503 with Retry-After, never a wrong 401. */
export class JwksUnavailableError extends Error {
  readonly retryAfterSeconds: number;
  constructor(message: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(message, { cause: options.cause });
    this.retryAfterSeconds = options.retryAfterSeconds ?? 30;
  }
}

/** The token names no key the issuer publishes (or one unusable for its algorithm). */
export class UnknownKeyError extends Error {}

export type JwksKeyResolver = (header: { kid?: unknown; alg?: unknown }) => Promise<string>;

export async function createJwksKeyResolver(options: {
  jwksUrl: URL;
  lookupIntervalMs: number;
}): Promise<JwksKeyResolver> {
  const { default: buildGetJwks } = await import('get-jwks');
  // Domain and path come from the configuration only; the token's iss/jku/x5u never choose a URL.
  const domain = options.jwksUrl.origin;
  const getJwks = buildGetJwks({
    jwksPath: options.jwksUrl.pathname + options.jwksUrl.search,
    issuersWhitelist: [domain],
    ttl: 10 * 60_000,
  });
  // A key id found missing is remembered for 30 s; lookups of key ids not in the cache draw from
  // a small token bucket. Past it the answer is 503 with Retry-After: a valid token with a newly
  // rotated key succeeds on retry. Bursts with one new key id share one fetch, since get-jwks
  // caches the pending lookup.
  const unknownKids = new Map<string, number>();
  let lookupTokens = UNCACHED_LOOKUP_BURST;
  let refilledAt = Date.now();
  function takeLookupToken(): boolean {
    const now = Date.now();
    lookupTokens = Math.min(UNCACHED_LOOKUP_BURST, lookupTokens + (now - refilledAt) / options.lookupIntervalMs);
    refilledAt = now;
    if (lookupTokens < 1) return false;
    lookupTokens -= 1;
    return true;
  }
  function rememberUnknown(cacheKey: string): void {
    if (unknownKids.size >= UNKNOWN_KID_MEMORY_SIZE) unknownKids.delete(unknownKids.keys().next().value as string);
    unknownKids.set(cacheKey, Date.now() + UNKNOWN_KID_MEMORY_MS);
  }

  return async (header) => {
    if (typeof header.kid !== 'string' || header.kid === '') throw new UnknownKeyError('the token names no key id');
    const signature = { domain, alg: typeof header.alg === 'string' ? header.alg : '', kid: header.kid };
    const cacheKey = getJwks.generateCacheKey(signature.alg, signature.kid, `${domain}/`);
    if (getJwks.cache.get(cacheKey) === undefined) {
      if ((unknownKids.get(cacheKey) ?? 0) > Date.now()) throw new UnknownKeyError('key id recently not found');
      if (!takeLookupToken()) {
        throw new JwksUnavailableError('too many lookups of new key ids', {
          retryAfterSeconds: Math.ceil(options.lookupIntervalMs / 1000),
        });
      }
    }
    let jwk: Record<string, unknown>;
    try {
      jwk = await getJwks.getJwk(signature);
    } catch (error) {
      if ((error as { code?: string }).code === 'JWK_NOT_FOUND') {
        rememberUnknown(cacheKey);
        throw new UnknownKeyError('unknown key id');
      }
      throw new JwksUnavailableError('the identity provider keys could not be fetched', { cause: error });
    }
    const { domain: _domain, ...keyMaterial } = jwk;
    try {
      return createPublicKey({ key: keyMaterial as JsonWebKey, format: 'jwk' })
        .export({ type: 'spki', format: 'pem' })
        .toString();
    } catch {
      throw new UnknownKeyError('unusable key');
    }
  };
}
