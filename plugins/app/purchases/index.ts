import fp from 'fastify-plugin';
import { createLockerRoomService, type LockerRoomService } from '../locker-room/service.js';
import { createOpeningService, type OpeningService } from '../opening/service.js';
import { createPurchasesService, type PurchasesService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    purchases: PurchasesService;
    opening: OpeningService;
    lockerRoom: LockerRoomService;
  }
}

/** The fan's side: buying packs, opening them, and the locker room that keeps the pulls. */
export default fp(
  async (fastify) => {
    fastify.decorate(
      'purchases',
      createPurchasesService({ ttlMs: fastify.config.purchases.ttlMs, wallets: fastify.wallets }),
    );
    fastify.decorate('opening', createOpeningService());
    fastify.decorate('lockerRoom', createLockerRoomService(fastify.db));
  },
  { name: 'purchases', dependencies: ['db', 'wallets'] },
);
