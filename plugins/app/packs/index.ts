import fp from 'fastify-plugin';
import { createPacksService, type PacksService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    packs: PacksService;
  }
}

/** Packs and their pools: the public catalog, the admin views and changes, and their serials. */
export default fp(
  async (fastify) => {
    fastify.decorate(
      'packs',
      createPacksService({
        db: fastify.db,
        catalogEvents: fastify.catalogEvents,
        events: fastify.events,
        audit: fastify.audit,
        collectibles: fastify.collectibles,
        teams: fastify.teams,
        purchases: fastify.purchases,
      }),
    );
  },
  { name: 'packs', dependencies: ['db', 'catalog', 'events', 'audit', 'collectibles', 'teams', 'purchases'] },
);
