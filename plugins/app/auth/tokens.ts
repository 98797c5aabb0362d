import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { createJwksKeyResolver, JwksUnavailableError, UnknownKeyError } from './jwks.js';
import { subjectProblem } from './rules.js';
import { loadSessionKeyring, type SessionKeyring } from '../sessions/keys.js';
import { ServiceUnavailableError, UnauthorizedError } from '../errors.js';
import type { KeySource } from '../../../config/index.js';

/**
 * Bearer-token verification with @fastify/jwt, for two issuers:
 * - the external identity provider: exactly one key source from the configuration, algorithms
 *   pinned to its key type, `iss`/`aud` when configured;
 * - the service itself (sessions of our own, when on): its current and previous keys by `kid`,
 *   EdDSA or ES256, `iss` and `aud` the service's public URL, `sid` and `jti` required.
 * The token's `iss` chooses the verifier: our own URL goes to ours, anything else to the
 * external one (which refuses an `iss` other than AUTH_JWT_ISSUER when that is set). Both
 * require `sub` and `exp`, allow 30 s of clock skew, and refuse an `iat` in the future. Every way
 * a token can be wrong is a 401; only an unreachable identity provider is a 503.
 */

export type TokenIssuer = 'external' | 'session';

export interface VerifiedToken {
  sub: string;
  claims: Record<string, unknown>;
  issuer: TokenIssuer;
  /** Our own tokens: the session they belong to. */
  sid?: string;
  /** The token's id, when it carries one (ours always do). */
  jti?: string;
  /** Seconds since the epoch. */
  exp: number;
}

export const CLOCK_TOLERANCE_MS = 30_000;
/** Exactly `Bearer` + one space + three base64url segments; anything else is malformed. */
const BEARER_PATTERN = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function decodeSegment(segment: string): Record<string, unknown> | undefined {
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
export function headerProblem(token: string, algorithms: readonly string[]): string | undefined {
  const header = decodeSegment(token.split('.')[0] ?? '');
  if (!header) return 'the header is not a JSON object';
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) {
    return `the algorithm ${JSON.stringify(header.alg)} is not ${algorithms.join(' or ')}`;
  }
  if ('crit' in header) return 'the header names critical extensions';
  return undefined;
}

async function secretFor(source: KeySource) {
  switch (source.kind) {
    case 'secret':
      return source.secret;
    case 'publicKey':
      return { public: source.publicKeyPem };
    case 'jwks': {
      const resolve = await createJwksKeyResolver({
        jwksUrl: source.jwksUrl,
        lookupIntervalMs: source.lookupIntervalMs,
      });
      return (_request: FastifyRequest, token: { header?: { kid?: unknown; alg?: unknown } }) =>
        resolve(token.header ?? {});
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Verifies the request's bearer token once per request; throws a 401 (or 503) AppError. */
    verifyBearer(request: FastifyRequest): Promise<VerifiedToken>;
    /** Verifies a token given some other way (RFC 7009 revocation) exactly as a bearer token. */
    verifyToken(request: FastifyRequest, token: string): Promise<VerifiedToken>;
    /** The keys of the service's own tokens; null when sessions are off. */
    sessionKeys: SessionKeyring | null;
  }
}

/** `iat` more than the clock tolerance ahead: a token from the future was not issued by an honest clock. */
export function issuedInFuture(iat: unknown, nowMs = Date.now()): boolean {
  return (
    iat !== undefined && (typeof iat !== 'number' || !Number.isFinite(iat) || iat * 1000 > nowMs + CLOCK_TOLERANCE_MS)
  );
}

export default fp(
  async (fastify: FastifyInstance) => {
    const { keySource, issuer, audience } = fastify.config.auth;
    const sessions = fastify.config.sessions;
    // @fastify/jwt reads the token through this: the bearer token, or the one being checked for a route.
    const tokenUnderCheck = new WeakMap<FastifyRequest, string>();
    const extractToken = (request: FastifyRequest) => tokenUnderCheck.get(request);
    await fastify.register(fastifyJwt, {
      secret: await secretFor(keySource),
      decode: { complete: true },
      verify: {
        algorithms: keySource.algorithms,
        // fast-jwt checks iss/aud only when present: require them when they are configured.
        requiredClaims: ['sub', 'exp', ...(issuer ? ['iss'] : []), ...(audience ? ['aud'] : [])],
        clockTolerance: CLOCK_TOLERANCE_MS,
        extractToken,
        ...(issuer ? { allowedIss: issuer } : {}),
        ...(audience ? { allowedAud: audience } : {}),
      },
    } as Parameters<typeof fastifyJwt>[1]);

    const keyring = sessions ? await loadSessionKeyring(sessions, fastify.config.dataDir, fastify.log) : null;
    fastify.decorate('sessionKeys', keyring);
    const sessionAlgorithms = keyring ? [...new Set([...keyring.byKid.values()].map((key) => key.algorithm))] : [];
    if (sessions && keyring) {
      await fastify.register(fastifyJwt, {
        namespace: 'session',
        secret: {
          private: keyring.current.privateKeyPem,
          public: async (_request: FastifyRequest, token: { header?: { kid?: unknown } }) => {
            const key = typeof token.header?.kid === 'string' ? keyring.byKid.get(token.header.kid) : undefined;
            if (!key) throw new UnknownKeyError('the token names none of our keys');
            return key.publicKeyPem;
          },
        },
        sign: {
          algorithm: keyring.current.algorithm,
          kid: keyring.current.kid,
          iss: sessions.issuer,
          aud: sessions.issuer,
          // @fastify/jwt reads a number as seconds.
          expiresIn: sessions.accessTtlMs / 1000,
          typ: 'at+jwt',
        },
        decode: { complete: true },
        verify: {
          algorithms: sessionAlgorithms,
          requiredClaims: ['sub', 'exp', 'iat', 'iss', 'aud', 'sid', 'jti'],
          clockTolerance: CLOCK_TOLERANCE_MS,
          allowedIss: sessions.issuer,
          allowedAud: sessions.issuer,
          extractToken,
          // A key from a callback is parsed again on every check: remember verified tokens instead
          // (until they expire). Logouts are checked apart, on every request.
          cache: 10_000,
        },
      } as unknown as Parameters<typeof fastifyJwt>[1]);
    }

    const verified = new WeakMap<FastifyRequest, Promise<VerifiedToken>>();

    /** Every rejection looks the same to the caller; why is logged at debug level only. */
    function rejected(
      request: FastifyRequest,
      reason: string,
      code: 'invalid_token' | 'token_expired' = 'invalid_token',
    ) {
      request.log.debug({ reason }, 'bearer token rejected');
      return code === 'token_expired'
        ? new UnauthorizedError('token_expired', 'The token has expired.')
        : new UnauthorizedError('invalid_token', 'The token is not valid.');
    }

    function bearerToken(request: FastifyRequest): string {
      const header = request.headers.authorization;
      if (header === undefined || header === '') {
        throw new UnauthorizedError('missing_credentials', 'This endpoint needs a bearer token.');
      }
      const match = BEARER_PATTERN.exec(header);
      if (!match?.[1]) throw rejected(request, 'the Authorization header is not "Bearer <JWT>"');
      return match[1];
    }

    async function verify(request: FastifyRequest, token: string): Promise<VerifiedToken> {
      if (!TOKEN_PATTERN.test(token)) throw rejected(request, 'the token is not three base64url segments');
      // The issuer named in the (not yet verified) payload only chooses which verifier to ask;
      // each verifier then checks `iss` itself, with its own keys and algorithms.
      // With sessions off there is one verifier: the payload need not be decoded to choose it.
      const issuerKind: TokenIssuer =
        sessions && decodeSegment(token.split('.')[1] ?? '')?.iss === sessions.issuer ? 'session' : 'external';
      const problem = headerProblem(token, issuerKind === 'session' ? sessionAlgorithms : keySource.algorithms);
      if (problem) throw rejected(request, problem);
      let payload: Record<string, unknown>;
      tokenUnderCheck.set(request, token);
      try {
        payload =
          issuerKind === 'session'
            ? await (request as unknown as { sessionJwtVerify<T>(): Promise<T> }).sessionJwtVerify<
                Record<string, unknown>
              >()
            : await request.jwtVerify<Record<string, unknown>>();
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
        throw rejected(
          request,
          `${issuerKind} issuer: ${(error as Error).message}`,
          expired ? 'token_expired' : 'invalid_token',
        );
      }
      // The verifier checks presence; what a subject may be is ours to check.
      const subject = subjectProblem(payload.sub);
      if (subject) throw rejected(request, subject);
      if (typeof payload.exp !== 'number') throw rejected(request, 'the expiry is not a number');
      if (issuedInFuture(payload.iat)) throw rejected(request, 'the token was issued in the future');
      const jti = typeof payload.jti === 'string' && payload.jti !== '' ? payload.jti : undefined;
      if (issuerKind === 'session') {
        if (typeof payload.sid !== 'string' || !jti) throw rejected(request, 'the session or token id is not a string');
        return {
          sub: payload.sub as string,
          claims: payload,
          issuer: 'session',
          sid: payload.sid,
          jti,
          exp: payload.exp,
        };
      }
      return { sub: payload.sub as string, claims: payload, issuer: 'external', jti, exp: payload.exp };
    }

    fastify.decorate('verifyBearer', (request: FastifyRequest) => {
      let result = verified.get(request);
      if (!result) {
        result = (async () => verify(request, bearerToken(request)))();
        verified.set(request, result);
      }
      return result;
    });
    fastify.decorate('verifyToken', verify);
  },
  { name: 'jwt', dependencies: ['env'] },
);
