import fp from 'fastify-plugin';
import { createPurchasesService, type PurchasesService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    purchases: PurchasesService;
  }
}

/** The fan's side of a sale: reserving packs, paying for them, and the reservations' count. */
export default fp(
  async (fastify) => {
    fastify.decorate(
      'purchases',
      createPurchasesService({
        db: fastify.db,
        ttlMs: fastify.config.purchases.ttlMs,
        wallets: fastify.wallets,
        events: fastify.events,
      }),
    );
  },
  { name: 'purchases', dependencies: ['db', 'env', 'wallets', 'events'] },
);
