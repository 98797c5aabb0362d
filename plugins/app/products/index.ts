import fp from 'fastify-plugin';
import { createProductsService, type ProductsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    products: ProductsService;
  }
}

/** Coin bundles and their prices. */
export default fp(
  async (fastify) => {
    fastify.decorate('products', createProductsService(fastify.db));
  },
  { name: 'products', dependencies: ['db'] },
);
