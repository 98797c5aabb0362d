import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { limitItem, policyItem } from '../external/rate-limit.js';
import { bearerTokenOf } from './auth/index.js';
import { AppError } from './errors.js';

/**
 * Who is counted, and the limits routes add of their own: the policy behind the rate limit that
 * plugins/external/rate-limit.ts wires (its store, the global limit, the catalog's fast path).
 */

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * A preHandler adding a limit of its own to a route, on top of the global one: `max` calls
     * per `windowMs` per signed-in caller, counted in the same store (Redis when configured).
     */
    perCallerLimit(options: KeyedLimitOptions): preHandlerAsyncHookHandler;
    /**
     * A limit on a key the route chooses (an IP address, a provider subject, a session): resolves
     * when the call is allowed, throws 429 `rate_limited` with Retry-After when not. Same store.
     */
    keyedLimit(options: KeyedLimitOptions): (request: FastifyRequest, key: string) => Promise<void>;
  }
}

export interface KeyedLimitOptions {
  name: string;
  max: number;
  windowMs: number;
  what: string;
}

/**
 * The global limit's key: per user when the request carries a valid token, else per IP (so a
 * forged token cannot buy its sender a fresh bucket). Synchronous for anonymous requests: the
 * public catalog's hot path pays no promise for it. Read at request time, when every plugin is up.
 */
export function callerKey(fastify: FastifyInstance): (request: FastifyRequest) => string | Promise<string> {
  return (request) => {
    if (!request.headers.authorization) return `ip:${request.ip}`;
    return fastify.verifyBearer(request).then(
      // A logged-out token counts against its sender's address, not against the user it names.
      (token) =>
        fastify.sessions?.isRevoked(token, bearerTokenOf(request)) ? `ip:${request.ip}` : `user:${token.sub}`,
      () => `ip:${request.ip}`,
    );
  };
}

export default fp(
  async (fastify) => {
    const keyedLimit = ({ name, max, windowMs, what }: KeyedLimitOptions) => {
      const keys = new WeakMap<FastifyRequest, string>();
      const policy = policyItem(name, max, windowMs);
      const limiter = fastify.createRateLimit({
        max,
        timeWindow: windowMs,
        keyGenerator: (request) => `${name}:${keys.get(request) ?? `ip:${request.ip}`}`,
      });
      return async (request: FastifyRequest, key: string) => {
        keys.set(request, key);
        const result = await limiter(request);
        if (!result.isAllowed && result.isExceeded) {
          throw new AppError(
            429,
            'rate_limited',
            `Too many ${what}: the limit is ${max} per ${Math.round(windowMs / 1000)} s. Retry after ${result.ttlInSeconds} s.`,
            {
              // Its own policy in the RateLimit fields, after the global one's (rate-limit.ts adds that).
              headers: {
                'retry-after': String(result.ttlInSeconds),
                'ratelimit-policy': policy,
                ratelimit: limitItem(name, 0, result.ttlInSeconds),
              },
            },
          );
        }
      };
    };
    fastify.decorate('keyedLimit', keyedLimit);

    fastify.decorate('perCallerLimit', (options: KeyedLimitOptions) => {
      const limit = keyedLimit(options);
      // Runs after authentication: the caller is known.
      return (request) => limit(request, request.caller?.id ?? `ip:${request.ip}`);
    });
  },
  { name: 'rate-limits', dependencies: ['rate-limit', 'jwt', 'sessions'] },
);
