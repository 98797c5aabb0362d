import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../../../../schemas/common.js';
import {
  CreatePriceBody,
  CreateProductBody,
  PriceResponse,
  ProductListResponse,
  ProductParams,
  ProductResponse,
  UpdateProductBody,
} from '../../../../schemas/products.js';

/** Coin bundles and their prices, for platform admins. */
const adminProductRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Products'],
        summary: 'Every coin bundle, with every price (platform admins)',
        description: 'Active or not, in `sortOrder`; prices newest first.',
        operationId: 'adminListProducts',
        response: { 200: ProductListResponse },
      },
    },
    async () => ({ success: true as const, data: await app.products.all() }),
  );

  app.post(
    '/',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Products'],
        summary: 'Create a coin bundle (platform admins)',
        description:
          'Active by default, but not on sale until it has a price. `coins + bonusCoins` is at most 100,000,000.',
        operationId: 'createProduct',
        body: Type.Ref(CreateProductBody),
        response: { 201: ProductResponse },
      },
    },
    async (request, reply) =>
      reply.code(201).send({ success: true as const, data: await app.products.create(request.body) }),
  );

  app.get(
    '/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Products'],
        summary: 'One coin bundle with every price (platform admins)',
        description: 'Active or not; its prices newest first, inactive ones included. 404 `product_not_found`.',
        operationId: 'adminGetProduct',
        params: ProductParams,
        response: { 200: ProductResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({ success: true as const, data: await app.products.get(request.params.id) }),
  );

  app.patch(
    '/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Products'],
        summary: 'Edit a coin bundle (platform admins)',
        description:
          'Name, description, coins, bonus, active, sort order. Orders already made keep the coins they were made for.',
        operationId: 'updateProduct',
        params: ProductParams,
        body: Type.Ref(UpdateProductBody),
        response: { 200: ProductResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({ success: true as const, data: await app.products.update(request.params.id, request.body) }),
  );

  app.post(
    '/:id/prices',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Products'],
        summary: 'Give a coin bundle a price (platform admins)',
        description:
          'Amount and currency never change once made. The new price is active at once and replaces (deactivates) an active price of the bundle in the same currency.',
        operationId: 'createPrice',
        params: ProductParams,
        body: Type.Ref(CreatePriceBody),
        response: { 201: PriceResponse, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const { price } = await app.products.addPrice(request.params.id, request.body);
      return reply.code(201).send({ success: true as const, data: price });
    },
  );
};

export default adminProductRoutes;
