import { createPublicKey, type JsonWebKey } from 'node:crypto';
import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ServiceUnavailableError, UnauthorizedError } from '../app/errors.js';
import type { KeySource } from './env.js';

/**
 * Bearer-token verification with @fastify/jwt (DESIGN.md §5): exactly one key source from the
 * configuration, algorithms pinned to its key type, `exp` and `sub` required, 30 s clock
 * tolerance, `iss`/`aud` when configured. Every way a token can be wrong is a 401; only an
 * unreachable identity provider is a 503.
 */

export interface VerifiedToken {
  sub: string;
  claims: Record<string, unknown>;
}

const CLOCK_TOLERANCE_MS = 30_000;
/** Subjects become user ids, which are path ids of 1–128 characters (DESIGN.md §4). */
const MAX_SUBJECT_LENGTH = 128;
/** Lookups of key ids that are not cached: a burst of 10, then one per second (see jwksKeyResolver). */
const UNCACHED_LOOKUP_BURST = 10;
const UNCACHED_LOOKUP_REFILL_MS = 1000;
// Like jose's JWKS cooldown: a key id published within this window after a miss is refused until it ends.
const UNKNOWN_KID_MEMORY_MS = 30_000;
const UNKNOWN_KID_MEMORY_SIZE = 10_000;
// Control characters have no place in a subject, and PostgreSQL text cannot store NUL.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
/** Exactly `Bearer` + one space + three base64url segments; anything else is malformed. */
const BEARER_PATTERN = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/;

class JwksUnavailableError extends Error {
  readonly retryAfterSeconds: number;
  constructor(message: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(message, { cause: options.cause });
    this.retryAfterSeconds = options.retryAfterSeconds ?? 30;
  }
}
class UnknownKeyError extends Error {}

function decodeSegment(segment: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const invalid = (message: string) => new UnauthorizedError('invalid_token', message);

/**
 * Checks what the verifier must never be asked to decide: the header's algorithm against the
 * pinned list, and critical extensions (RFC 7515 §4.1.11: a token naming any must be rejected,
 * as we understand none).
 */
function checkHeader(token: string, algorithms: readonly string[]): void {
  const header = decodeSegment(token.split('.')[0] ?? '');
  if (!header) throw invalid('The token header is not valid JSON.');
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) {
    throw invalid(`The token algorithm must be ${algorithms.join(' or ')}.`);
  }
  if ('crit' in header) throw invalid('The token uses critical header extensions this service does not support.');
}

async function jwksKeyResolver(source: Extract<KeySource, { kind: 'jwks' }>) {
  const { default: buildGetJwks } = await import('get-jwks');
  // Domain and path come from the configuration only; the token's iss/jku/x5u never choose a URL.
  const domain = source.jwksUrl.origin;
  const getJwks = buildGetJwks({
    jwksPath: source.jwksUrl.pathname + source.jwksUrl.search,
    issuersWhitelist: [domain],
    ttl: 10 * 60_000,
  });
  // Tokens with made-up key ids must not turn into one JWKS fetch each. A key id found missing
  // is remembered for a minute; lookups of key ids not in the cache draw from a small token
  // bucket. Past it the answer is 503 with Retry-After (never a wrong 401): a valid token with
  // a newly rotated key succeeds on retry. Bursts with one new key id share one fetch, since
  // get-jwks caches the pending lookup.
  const unknownKids = new Map<string, number>();
  let lookupTokens = UNCACHED_LOOKUP_BURST;
  let refilledAt = Date.now();
  function takeLookupToken(): boolean {
    const now = Date.now();
    lookupTokens = Math.min(UNCACHED_LOOKUP_BURST, lookupTokens + (now - refilledAt) / UNCACHED_LOOKUP_REFILL_MS);
    refilledAt = now;
    if (lookupTokens < 1) return false;
    lookupTokens -= 1;
    return true;
  }
  function rememberUnknown(cacheKey: string): void {
    if (unknownKids.size >= UNKNOWN_KID_MEMORY_SIZE) unknownKids.delete(unknownKids.keys().next().value as string);
    unknownKids.set(cacheKey, Date.now() + UNKNOWN_KID_MEMORY_MS);
  }

  return async (_request: FastifyRequest, token: { header?: { kid?: string; alg?: string } }) => {
    const signature = { domain, alg: token.header?.alg ?? '', kid: token.header?.kid as string };
    const cacheKey = getJwks.generateCacheKey(signature.alg, signature.kid, `${domain}/`);
    if (getJwks.cache.get(cacheKey) === undefined) {
      if ((unknownKids.get(cacheKey) ?? 0) > Date.now()) throw new UnknownKeyError('key id recently not found');
      if (!takeLookupToken()) {
        throw new JwksUnavailableError('too many lookups of new key ids', { retryAfterSeconds: 1 });
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
      return createPublicKey({ key: keyMaterial as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    } catch {
      throw new UnknownKeyError('unusable key');
    }
  };
}

async function secretFor(source: KeySource) {
  switch (source.kind) {
    case 'secret':
      return source.secret;
    case 'publicKey':
      return { public: source.publicKeyPem };
    case 'jwks':
      return jwksKeyResolver(source);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Verifies the request's bearer token once per request; throws a 401 (or 503) AppError. */
    verifyBearer(request: FastifyRequest): Promise<VerifiedToken>;
  }
}

export default fp(
  async (fastify: FastifyInstance) => {
    const { keySource, issuer, audience } = fastify.config.auth;
    await fastify.register(fastifyJwt, {
      secret: await secretFor(keySource),
      decode: { complete: true },
      verify: {
        algorithms: keySource.algorithms,
        // fast-jwt checks iss/aud only when present: require them when they are configured.
        requiredClaims: ['sub', 'exp', ...(issuer ? ['iss'] : []), ...(audience ? ['aud'] : [])],
        clockTolerance: CLOCK_TOLERANCE_MS,
        ...(issuer ? { allowedIss: issuer } : {}),
        ...(audience ? { allowedAud: audience } : {}),
      },
    } as Parameters<typeof fastifyJwt>[1]);

    const verified = new WeakMap<FastifyRequest, Promise<VerifiedToken>>();

    async function verify(request: FastifyRequest): Promise<VerifiedToken> {
      const header = request.headers.authorization;
      if (header === undefined || header === '') {
        throw new UnauthorizedError('missing_credentials', 'This endpoint needs a bearer token.');
      }
      const match = BEARER_PATTERN.exec(header);
      if (!match?.[1]) throw invalid('The Authorization header must be "Bearer <token>".');
      checkHeader(match[1], keySource.algorithms);
      let payload: Record<string, unknown>;
      try {
        payload = await request.jwtVerify<Record<string, unknown>>();
      } catch (error) {
        if (error instanceof JwksUnavailableError) {
          request.log.error({ err: error.cause ?? error }, 'JWKS lookup failed');
          throw new ServiceUnavailableError(
            'auth_unavailable',
            'Tokens cannot be checked right now; try again shortly.',
            error.retryAfterSeconds,
          );
        }
        if ((error as { code?: string }).code === 'FST_JWT_AUTHORIZATION_TOKEN_EXPIRED') {
          throw new UnauthorizedError('token_expired', 'The token has expired.');
        }
        throw invalid('The token is not valid.');
      }
      // The verifier checks presence; the types are ours to check (a numeric sub is no subject).
      if (
        typeof payload.sub !== 'string' ||
        payload.sub.length === 0 ||
        payload.sub.length > MAX_SUBJECT_LENGTH ||
        CONTROL_CHARACTERS.test(payload.sub)
      ) {
        throw invalid(`The token subject must be 1 to ${MAX_SUBJECT_LENGTH} characters without control characters.`);
      }
      if (typeof payload.exp !== 'number') throw invalid('The token expiry must be a number.');
      return { sub: payload.sub, claims: payload };
    }

    fastify.decorate('verifyBearer', (request: FastifyRequest) => {
      let result = verified.get(request);
      if (!result) {
        result = verify(request);
        verified.set(request, result);
      }
      return result;
    });
  },
  { name: 'jwt', dependencies: ['env'] },
);
