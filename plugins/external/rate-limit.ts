import fastifyRateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import type { FastifyReply, FastifyRequest, onRequestHookHandler, preHandlerAsyncHookHandler } from 'fastify';
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
    keyedLimit(options: {
      name: string;
      max: number;
      windowMs: number;
      what: string;
    }): (request: FastifyRequest, key: string) => Promise<void>;
  }
}

/**
 * The global rate limit: per user when the request carries a valid token, else per IP (so a
 * forged token cannot buy its sender a fresh bucket). In memory for one instance; in Redis when
 * REDIS_URL is set, so every instance counts against the same limit.
 */
/** Callers (IPs and users) the in-memory store remembers, the plugin's default. */
const LOCAL_STORE_KEYS = 5000;

/** The plugin builds its store with `new`: this hands it the one made already. */
function sharedStore(store: FastifyRateLimitStore): FastifyRateLimitStoreCtor {
  return function SharedStore() {
    return store;
  } as unknown as FastifyRateLimitStoreCtor;
}

/** A window as a person says it: `1 minute`, `30 seconds`, `500 ms`. */
export function describeWindow(ms: number): string {
  const unit = (
    [
      ['hour', 3_600_000],
      ['minute', 60_000],
      ['second', 1000],
    ] as const
  ).find(([, size]) => ms % size === 0);
  if (!unit) return `${ms} ms`;
  const count = ms / unit[1];
  return `${count} ${unit[0]}${count === 1 ? '' : 's'}`;
}

export default fp(
  async (fastify) => {
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
        (token) =>
          fastify.sessions?.isRevoked(token, bearerTokenOf(request)) ? `ip:${request.ip}` : `user:${token.sub}`,
        () => `ip:${request.ip}`,
      );
    }

    const limitExceeded = (ttlMs: number) => ({
      statusCode: 429,
      message: `Too many requests: the limit is ${rateLimit.max} per ${describeWindow(rateLimit.windowMs)}. Retry after ${Math.ceil(ttlMs / 1000)} s.`,
    });

    // In memory, the plugin's own store, made here so that the catalog's check below counts in it too.
    const localStore = redis ? undefined : new LocalStore(false, false, LOCAL_STORE_KEYS);
    if (localStore) {
      // A public catalog read (`config.lowPriority`) is counted synchronously, in the same bucket and
      // window as every other request of its caller, with the same headers and 429: the plugin's
      // hook costs three promises a request, a fifth of what a cached read costs in all. Reads with
      // a token (whose key needs its verification) and every other route go through the plugin.
      const limitText = String(rateLimit.max);
      const countCatalogRead: onRequestHookHandler = (request, reply, done) => {
        if (request.headers.authorization) {
          (pluginCheck as (request: FastifyRequest, reply: FastifyReply) => Promise<void>)
            .call(fastify, request, reply)
            .then(() => done(), done);
          return;
        }
        localStore.incr(
          `ip:${request.ip}`,
          (error, counted) => {
            // A store failure serves the request, as the plugin's skipOnError does.
            if (error || !counted) return done();
            // As text: Node validates a header value with a regular expression, slowly for a number.
            const resetSeconds = String(Math.ceil(counted.ttl / 1000));
            reply.header('x-ratelimit-limit', limitText);
            reply.header('x-ratelimit-remaining', String(Math.max(0, rateLimit.max - counted.current)));
            reply.header('x-ratelimit-reset', resetSeconds);
            if (counted.current <= rateLimit.max) return done();
            reply.header('retry-after', resetSeconds);
            done(limitExceeded(counted.ttl) as unknown as Error);
          },
          rateLimit.windowMs,
          rateLimit.max,
        );
      };
      fastify.addHook('onRoute', (route) => {
        if (!route.config?.lowPriority || route.config.rateLimit !== undefined) return;
        route.config = { ...route.config, rateLimit: false };
        route.onRequest = [countCatalogRead, ...[route.onRequest ?? []].flat()];
      });
    }

    await fastify.register(fastifyRateLimit, {
      global: true,
      max: rateLimit.max,
      timeWindow: rateLimit.windowMs,
      ...(redis
        ? { redis, nameSpace: 'pack-service:rate-limit:' }
        : { store: sharedStore(localStore as FastifyRateLimitStore) }),
      // A store outage should not take the API down with it.
      skipOnError: true,
      keyGenerator: callerKey,
      errorResponseBuilder: (_request, context) => limitExceeded(context.ttl),
    });
    // The plugin's own check, for the catalog reads that carry a token.
    const pluginCheck = fastify.rateLimit();

    const keyedLimit = ({
      name,
      max,
      windowMs,
      what,
    }: {
      name: string;
      max: number;
      windowMs: number;
      what: string;
    }) => {
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
          throw new AppError(
            429,
            'rate_limited',
            `Too many ${what}: the limit is ${max} per ${Math.round(windowMs / 1000)} s. Retry after ${result.ttlInSeconds} s.`,
            {
              headers: { 'retry-after': String(result.ttlInSeconds) },
            },
          );
        }
      };
    };
    fastify.decorate('keyedLimit', keyedLimit);

    fastify.decorate('perCallerLimit', (options: { name: string; max: number; windowMs: number; what: string }) => {
      const limit = keyedLimit(options);
      // Runs after authentication: the caller is known.
      return (request) => limit(request, request.caller?.id ?? `ip:${request.ip}`);
    });
  },
  { name: 'rate-limit', dependencies: ['env', 'jwt'] },
);
