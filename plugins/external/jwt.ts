import { createPublicKey, type JsonWebKey } from 'node:crypto';
import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { subjectProblem } from '../app/auth/rules.js';
import { ServiceUnavailableError, UnauthorizedError } from '../app/errors.js';
import type { KeySource } from './env.js';

/**
 * Bearer-token verification with @fastify/jwt: exactly one key source from the
 * configuration, algorithms pinned to its key type, `exp` and `sub` required, 30 s clock
 * tolerance, `iss`/`aud` when configured. Every way a token can be wrong is a 401; only an
 * unreachable identity provider is a 503.
 */

export interface VerifiedToken {
  sub: string;
  claims: Record<string, unknown>;
}

const CLOCK_TOLERANCE_MS = 30_000;
/** Lookups of key ids that are not cached: a burst of 10, then one per AUTH_JWKS_LOOKUP_INTERVAL (see jwksKeyResolver). */
const UNCACHED_LOOKUP_BURST = 10;
// Like jose's JWKS cooldown: a key id published within this window after a miss is refused until it ends.
const UNKNOWN_KID_MEMORY_MS = 30_000;
const UNKNOWN_KID_MEMORY_SIZE = 10_000;
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

/**
 * What the verifier must never be asked to decide, as the reason to refuse the token: the
 * header's algorithm against the pinned list, and critical extensions (RFC 7515 §4.1.11: a token
 * naming any must be rejected, as we understand none).
 */
function headerProblem(token: string, algorithms: readonly string[]): string | undefined {
  const header = decodeSegment(token.split('.')[0] ?? '');
  if (!header) return 'the header is not a JSON object';
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) {
    return `the algorithm ${JSON.stringify(header.alg)} is not ${algorithms.join(' or ')}`;
  }
  if ('crit' in header) return 'the header names critical extensions';
  return undefined;
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
  // is remembered for 30 s; lookups of key ids not in the cache draw from a small token
  // bucket. Past it the answer is 503 with Retry-After (never a wrong 401): a valid token with
  // a newly rotated key succeeds on retry. Bursts with one new key id share one fetch, since
  // get-jwks caches the pending lookup.
  const unknownKids = new Map<string, number>();
  let lookupTokens = UNCACHED_LOOKUP_BURST;
  let refilledAt = Date.now();
  function takeLookupToken(): boolean {
    const now = Date.now();
    lookupTokens = Math.min(UNCACHED_LOOKUP_BURST, lookupTokens + (now - refilledAt) / source.lookupIntervalMs);
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
        throw new JwksUnavailableError('too many lookups of new key ids', { retryAfterSeconds: Math.ceil(source.lookupIntervalMs / 1000) });
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

    /** Every rejection looks the same to the caller; why is logged at debug level only. */
    function rejected(request: FastifyRequest, reason: string, code: 'invalid_token' | 'token_expired' = 'invalid_token') {
      request.log.debug({ reason }, 'bearer token rejected');
      return code === 'token_expired'
        ? new UnauthorizedError('token_expired', 'The token has expired.')
        : new UnauthorizedError('invalid_token', 'The token is not valid.');
    }

    async function verify(request: FastifyRequest): Promise<VerifiedToken> {
      const header = request.headers.authorization;
      if (header === undefined || header === '') {
        throw new UnauthorizedError('missing_credentials', 'This endpoint needs a bearer token.');
      }
      const match = BEARER_PATTERN.exec(header);
      if (!match?.[1]) throw rejected(request, 'the Authorization header is not "Bearer <JWT>"');
      const problem = headerProblem(match[1], keySource.algorithms);
      if (problem) throw rejected(request, problem);
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
        const expired = (error as { code?: string }).code === 'FST_JWT_AUTHORIZATION_TOKEN_EXPIRED';
        throw rejected(request, (error as Error).message, expired ? 'token_expired' : 'invalid_token');
      }
      // The verifier checks presence; what a subject may be is ours to check.
      const subject = subjectProblem(payload.sub);
      if (subject) throw rejected(request, subject);
      if (typeof payload.exp !== 'number') throw rejected(request, 'the expiry is not a number');
      return { sub: payload.sub as string, claims: payload };
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
