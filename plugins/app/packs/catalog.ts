import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import {
  CATALOG_CACHE_CONTROL,
  CATALOG_CACHE_TTL_MS,
  type CachedResponse,
  CatalogCache,
  type CatalogEvents,
  decodeChange,
  encodeChange,
  etagMatches,
  isPublicChange,
} from './catalog-cache.js';
import { activePacksHolding, CATALOG_CHANNEL, notifyCatalogChange } from './repository.js';

/** Enough for every page a busy catalog serves; a flood of forged cursors only evicts. */
const CATALOG_CACHE_BYTES = 32 * 1024 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    catalogCache: CatalogCache;
    /** How a change of the public catalog reaches every instance's cache. */
    catalogEvents: CatalogEvents;
    /**
     * Answers a public catalog read from the cache (computing and caching it on a miss), with
     * ETag, Cache-Control and 304 for a matching If-None-Match.
     */
    sendCatalogResponse(
      request: FastifyRequest,
      reply: FastifyReply,
      key: string,
      compute: () => Promise<unknown>,
    ): Promise<FastifyReply>;
    /** A preParsing hook answering a public catalog URL from the cache when it was answered before. */
    answerFromCatalogCache: preParsingHookHandler;
  }
}

/**
 * The public catalog's response cache: answers public pack reads from memory, and hears of every
 * change of packs and collectibles (from this instance, and from others through PostgreSQL).
 */
export default fp(
  async (fastify) => {
    const cache = new CatalogCache({ maxBytes: CATALOG_CACHE_BYTES, ttlMs: CATALOG_CACHE_TTL_MS });
    const instanceId = randomUUID();
    const events: CatalogEvents = {
      notify: async (tx, change) => {
        if (isPublicChange(change)) await notifyCatalogChange(tx, encodeChange(instanceId, change));
      },
      invalidateLocal: (change) => cache.invalidate(change),
      activePacksHolding,
    };
    // Other instances' changes drop what they affect; any gap in hearing about them drops everything.
    const stopListening = await fastify.db.listen(
      CATALOG_CHANNEL,
      (payload) => {
        const message = decodeChange(payload);
        if (message.from !== instanceId) cache.invalidate(message.change);
      },
      () => cache.invalidate('all'),
    );
    fastify.addHook('preClose', async () => {
      await stopListening();
    });

    fastify.decorate('catalogCache', cache);
    fastify.decorate('catalogEvents', events);

    const send = (request: FastifyRequest, reply: FastifyReply, entry: CachedResponse) => {
      reply.header('etag', entry.etag).header('cache-control', CATALOG_CACHE_CONTROL);
      if (etagMatches(request.headers['if-none-match'], entry.etag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(entry.body);
    };

    fastify.decorate(
      'sendCatalogResponse',
      async (request: FastifyRequest, reply: FastifyReply, key: string, compute: () => Promise<unknown>) => {
        const cached = cache.getOrCompute(key, async () => Buffer.from(reply.serialize(await compute()) as string));
        const entry = cached instanceof Promise ? await cached : cached;
        cache.rememberUrl(request.url, key);
        return send(request, reply, entry);
      },
    );

    // A URL answered before and still cached is answered at once: its query string and path were
    // validated then, and validate the same now. Runs before parsing, after every onRequest hook
    // (the rate limit and the security headers still apply).
    const answerFromCatalogCache: preParsingHookHandler = (request, reply, payload, done) => {
      const entry = cache.forUrl(request.url);
      if (!entry) return done(null, payload);
      send(request, reply, entry);
    };
    fastify.decorate('answerFromCatalogCache', answerFromCatalogCache);
  },
  { name: 'catalog', dependencies: ['db'] },
);
