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
const MAX_SUBJECT_LENGTH = 255;
const UNCACHED_KEY_FETCH_INTERVAL_MS = 1000;
/** Exactly `Bearer` + one space + three base64url segments; anything else is malformed. */
const BEARER_PATTERN = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/;

class JwksUnavailableError extends Error {}
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
  // Tokens with made-up key ids must not turn into one JWKS fetch each: a key id that is not
  // cached may trigger a fetch at most once per second. Bursts with one new key id share the
  // first fetch (get-jwks caches the pending promise), so only distinct new ids are throttled.
  let lastUncachedFetch = 0;
  return async (_request: FastifyRequest, token: { header?: { kid?: string; alg?: string } }) => {
    const signature = { domain, alg: token.header?.alg ?? '', kid: token.header?.kid as string };
    const cached = getJwks.cache.get(getJwks.generateCacheKey(signature.alg, signature.kid, `${domain}/`)) !== undefined;
    if (!cached) {
      if (Date.now() - lastUncachedFetch < UNCACHED_KEY_FETCH_INTERVAL_MS) throw new UnknownKeyError('key id not cached');
      lastUncachedFetch = Date.now();
    }
    let jwk: Record<string, unknown>;
    try {
      jwk = await getJwks.getJwk(signature);
    } catch (error) {
      if ((error as { code?: string }).code === 'JWK_NOT_FOUND') throw new UnknownKeyError('unknown key id');
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
        requiredClaims: ['sub', 'exp'],
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
          request.log.error({ err: error.cause }, 'JWKS fetch failed');
          throw new ServiceUnavailableError('auth_unavailable', 'Tokens cannot be checked right now; try again shortly.', 30);
        }
        if ((error as { code?: string }).code === 'FST_JWT_AUTHORIZATION_TOKEN_EXPIRED') {
          throw new UnauthorizedError('token_expired', 'The token has expired.');
        }
        throw invalid('The token is not valid.');
      }
      // The verifier checks presence; the types are ours to check (a numeric sub is no subject).
      if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > MAX_SUBJECT_LENGTH) {
        throw invalid(`The token subject must be a string of 1 to ${MAX_SUBJECT_LENGTH} characters.`);
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
