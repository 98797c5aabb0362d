import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProductListResponse } from '../../../schemas/products.js';

const productRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'public', lowPriority: true },
      schema: {
        tags: ['Products'],
        summary: 'Coin bundles on sale, with their prices',
        description:
          'Active bundles that have an active price, in `sortOrder`; each with its active prices (one per currency).',
        operationId: 'listProducts',
        response: { 200: ProductListResponse },
      },
    },
    async () => ({ success: true as const, data: await app.products.onSale() }),
  );
};

export default productRoutes;
