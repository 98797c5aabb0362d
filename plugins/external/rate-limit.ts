import fastifyRateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { keepRedisConnectionLive, REDIS_COMMAND_TIMEOUT_MS } from './redis-keepalive.js';

export interface RateLimitOptions {
  /**
   * Whose bucket a request counts in (the policy, plugins/app/rate-limits.ts). It must give
   * `ip:<address>` for a request without an Authorization header: the catalog's fast path below
   * counts those itself, in the same bucket.
   */
  keyGenerator: (request: FastifyRequest) => string | Promise<string>;
}

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

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers, structured-field lists): one
 * policy's quota `q` per window `w` (seconds), and its remaining quota `r` and seconds to reset `t`.
 * A window is told in whole seconds, rounded up (the field admits no fraction).
 */
export const DEFAULT_POLICY = 'default';
export const policyItem = (name: string, max: number, windowMs: number) =>
  `"${name}";q=${max};w=${Math.max(1, Math.ceil(windowMs / 1000))}`;
export const limitItem = (name: string, remaining: number | string, resetSeconds: number | string) =>
  `"${name}";r=${remaining};t=${resetSeconds}`;

/** A list field's items: the global policy's first, then any a route's own limit set. */
const listOf = (first: string, rest: unknown) => (typeof rest === 'string' && rest ? `${first}, ${rest}` : first);

/**
 * The global rate limit, per the caller key it is given. In memory for one instance; in Redis when
 * REDIS_URL is set, so every instance counts against the same limit.
 */
export default fp<RateLimitOptions>(
  async (fastify, { keyGenerator }) => {
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
      keyGenerator,
      errorResponseBuilder: (_request, context) => limitExceeded(context.ttl),
    });
    // The plugin's own check, for the catalog reads that carry a token.
    const pluginCheck = fastify.rateLimit();

    // The RateLimit-Policy and RateLimit fields beside the plugin's X-RateLimit-* headers (kept:
    // clients read them), on every response the global limit counted, 429s included. The plugin
    // has no option for the current draft's fields (its enableDraftSpec writes an older draft's
    // RateLimit-Limit/-Remaining/-Reset instead of ours), and its onExceeding/onExceeded callbacks
    // do not see the counts: the fields are made from the headers it (or the catalog's check) set.
    const globalPolicy = policyItem(DEFAULT_POLICY, rateLimit.max, rateLimit.windowMs);
    fastify.addHook('onSend', (_request, reply, payload, done) => {
      const remaining = reply.getHeader('x-ratelimit-remaining');
      if (remaining !== undefined) {
        const reset = reply.getHeader('x-ratelimit-reset') as string | number;
        reply.header('ratelimit-policy', listOf(globalPolicy, reply.getHeader('ratelimit-policy')));
        reply.header(
          'ratelimit',
          listOf(limitItem(DEFAULT_POLICY, remaining as string | number, reset), reply.getHeader('ratelimit')),
        );
      }
      done(null, payload);
    });
  },
  { name: 'rate-limit', dependencies: ['env'] },
);
