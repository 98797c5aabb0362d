import fp from 'fastify-plugin';
import { type CollectiblesService, createCollectiblesService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    collectibles: CollectiblesService;
  }
}

/** The collectibles catalog: changes audited, the public responses showing them invalidated. */
export default fp(
  async (fastify) => {
    fastify.decorate(
      'collectibles',
      createCollectiblesService({
        db: fastify.db,
        events: fastify.catalogEvents,
        audit: fastify.audit,
        teams: fastify.teams,
      }),
    );
  },
  { name: 'collectibles', dependencies: ['db', 'catalog', 'audit', 'teams'] },
);
