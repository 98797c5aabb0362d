import fp from 'fastify-plugin';
import { createAppStoreApi } from './client.js';
import { type AppStoreService, createAppStoreService } from './service.js';
import { createAppleVerifier } from './verifier.js';

declare module 'fastify' {
  interface FastifyInstance {
    appStore: AppStoreService;
  }
}

/** Coins bought in the iOS app (Apple's App Store Server Library); orders and coins go through checkout. */
export default fp(
  async (fastify) => {
    const config = fastify.config.apple;
    fastify.decorate(
      'appStore',
      createAppStoreService({
        db: fastify.db,
        verifier: config ? createAppleVerifier(config) : null,
        api: config ? createAppStoreApi(config) : null,
        log: fastify.log,
        checkout: fastify.checkout,
        products: fastify.products,
        wallets: fastify.wallets,
      }),
    );
  },
  { name: 'app-store', dependencies: ['db', 'env', 'checkout', 'products', 'wallets'] },
);
