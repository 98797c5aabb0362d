import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type AuditService, createAuditService } from '../audit/service.js';
import { type CollectiblesService, createCollectiblesService } from '../collectibles/service.js';
import { CatalogCache, type CatalogEvents, etagMatches } from './catalog-cache.js';
import { CATALOG_CHANNEL, notifyCatalogChange } from './repository.js';
import { createPacksService, type PacksService } from './service.js';

/** How long a cached public response may be served: the staleness bound of `available`. */
export const CATALOG_CACHE_TTL_MS = 5000;
const CATALOG_CACHE_ENTRIES = 1000;

declare module 'fastify' {
  interface FastifyInstance {
    packs: PacksService;
    collectibles: CollectiblesService;
    auditLog: AuditService;
    catalogCache: CatalogCache;
    /**
     * Answers a public catalog read from the cache (computing and caching it on a miss), with
     * ETag, Cache-Control and 304 for a matching If-None-Match.
     */
    sendCatalogResponse(request: FastifyRequest, reply: FastifyReply, key: string, compute: () => Promise<unknown>): Promise<FastifyReply>;
  }
}

/** The catalog services (packs, collectibles, audit log) and the public response cache. */
export default fp(
  async (fastify) => {
    const cache = new CatalogCache({ maxEntries: CATALOG_CACHE_ENTRIES, ttlMs: CATALOG_CACHE_TTL_MS });
    const instanceId = randomUUID();
    const events: CatalogEvents = {
      notify: (tx) => notifyCatalogChange(tx, instanceId),
      invalidateLocal: () => cache.invalidate(),
    };
    // Other instances' changes (and any gap in hearing about them) drop this instance's cache.
    const stopListening = await fastify.db.listen(
      CATALOG_CHANNEL,
      (payload) => {
        if (payload !== instanceId) cache.invalidate();
      },
      () => cache.invalidate(),
    );
    fastify.addHook('preClose', async () => {
      await stopListening();
    });

    fastify.decorate('catalogCache', cache);
    fastify.decorate('packs', createPacksService(fastify.db, events));
    fastify.decorate('collectibles', createCollectiblesService(fastify.db, events));
    fastify.decorate('auditLog', createAuditService(fastify.db));

    fastify.decorate(
      'sendCatalogResponse',
      async (request: FastifyRequest, reply: FastifyReply, key: string, compute: () => Promise<unknown>) => {
        const cached = cache.getOrCompute(key, async () => Buffer.from(reply.serialize(await compute()) as string));
        const entry = cached instanceof Promise ? await cached : cached;
        reply.header('etag', entry.etag).header('cache-control', `public, max-age=${CATALOG_CACHE_TTL_MS / 1000}`);
        if (etagMatches(request.headers['if-none-match'], entry.etag)) return reply.code(304).send();
        return reply.type('application/json; charset=utf-8').send(entry.body);
      },
    );
  },
  { name: 'catalog', dependencies: ['db'] },
);
