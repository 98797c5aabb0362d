import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { keepRedisConnectionLive, REDIS_COMMAND_TIMEOUT_MS } from './redis-keepalive.js';
import { bearerTokenOf } from '../app/auth.js';
import { AppError } from '../app/errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * A preHandler adding a limit of its own to a route, on top of the global one: `max` calls
     * per `windowMs` per signed-in caller, counted in the same store (Redis when configured).
     */
    perCallerLimit(options: { name: string; max: number; windowMs: number; what: string }): preHandlerAsyncHookHandler;
    /**
     * A limit on a key the route chooses (an IP address, a provider subject, a session): resolves
     * when the call is allowed, throws 429 `rate_limited` with Retry-After when not. Same store.
     */
    keyedLimit(options: { name: string; max: number; windowMs: number; what: string }): (request: FastifyRequest, key: string) => Promise<void>;
  }
}

/**
 * The global rate limit: per user when the request carries a valid token, else per IP (so a
 * forged token cannot buy its sender a fresh bucket). In memory for one instance; in Redis when
 * REDIS_URL is set, so every instance counts against the same limit.
 */
export default fp(async (fastify) => {
  const { rateLimit, redisUrl } = fastify.config;
  // ioredis is loaded only when configured; most single-instance setups never need it.
  const redis = redisUrl
    ? new (await import('ioredis')).Redis(redisUrl, {
        connectTimeout: 2000,
        maxRetriesPerRequest: 1,
        // Fail fast while disconnected (skipOnError then serves the request) instead of queueing,
        // and when a cut network leaves the connection open but silent.
        enableOfflineQueue: false,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      })
    : undefined;
  if (redis) {
    redis.on('error', (error) => fastify.log.warn({ err: error }, 'rate-limit store (Redis) error'));
    const stopKeepAlive = keepRedisConnectionLive(redis);
    fastify.addHook('onClose', async () => {
      stopKeepAlive();
      await redis.quit().catch(() => redis.disconnect());
    });
  }

  // Synchronous for anonymous requests: the public catalog's hot path pays no promise for it.
  function callerKey(request: FastifyRequest): string | Promise<string> {
    if (!request.headers.authorization) return `ip:${request.ip}`;
    return fastify.verifyBearer(request).then(
      // A logged-out token counts against its sender's address, not against the user it names.
      (token) => (fastify.sessions?.isRevoked(token, bearerTokenOf(request)) ? `ip:${request.ip}` : `user:${token.sub}`),
      () => `ip:${request.ip}`,
    );
  }

  await fastify.register(fastifyRateLimit, {
    global: true,
    max: rateLimit.max,
    timeWindow: rateLimit.windowMs,
    ...(redis ? { redis, nameSpace: 'pack-service:rate-limit:' } : {}),
    // A store outage should not take the API down with it.
    skipOnError: true,
    keyGenerator: callerKey,
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      message: `Too many requests: the limit is ${context.max} per ${context.after}. Retry after ${Math.ceil(context.ttl / 1000)} s.`,
    }),
  });

  const keyedLimit = ({ name, max, windowMs, what }: { name: string; max: number; windowMs: number; what: string }) => {
    const keys = new WeakMap<FastifyRequest, string>();
    const limiter = fastify.createRateLimit({
      max,
      timeWindow: windowMs,
      keyGenerator: (request) => `${name}:${keys.get(request) ?? `ip:${request.ip}`}`,
    });
    return async (request: FastifyRequest, key: string) => {
      keys.set(request, key);
      const result = await limiter(request);
      if (!result.isAllowed && result.isExceeded) {
        throw new AppError(429, 'rate_limited', `Too many ${what}: the limit is ${max} per ${Math.round(windowMs / 1000)} s. Retry after ${result.ttlInSeconds} s.`, {
          headers: { 'retry-after': String(result.ttlInSeconds) },
        });
      }
    };
  };
  fastify.decorate('keyedLimit', keyedLimit);

  fastify.decorate('perCallerLimit', (options: { name: string; max: number; windowMs: number; what: string }) => {
    const limit = keyedLimit(options);
    // Runs after authentication: the caller is known.
    return (request) => limit(request, request.caller?.id ?? `ip:${request.ip}`);
  });
}, { name: 'rate-limit', dependencies: ['env', 'jwt'] });
