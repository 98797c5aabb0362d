import fp from 'fastify-plugin';
import { createWalletsService, type WalletsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    wallets: WalletsService;
  }
}

/** Wallets: balances and their append-only ledger. */
export default fp(
  async (fastify) => {
    fastify.decorate('wallets', createWalletsService(fastify.db, fastify.users, fastify.events));
  },
  { name: 'wallets', dependencies: ['db', 'users', 'events'] },
);
