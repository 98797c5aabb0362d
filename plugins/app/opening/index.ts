import fp from 'fastify-plugin';
import { createOpeningService, type OpeningService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    opening: OpeningService;
  }
}

/** Opening owned packs: the verifiable draw, serials and points, in the caller's transaction. */
export default fp(
  async (fastify) => {
    fastify.decorate(
      'opening',
      createOpeningService({
        packs: fastify.packs,
        events: fastify.events,
        batchedChange: fastify.batchedChange.bind(fastify),
      }),
    );
  },
  { name: 'opening', dependencies: ['packs', 'idempotency', 'events'] },
);
