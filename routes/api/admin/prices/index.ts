import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../../../../schemas/common.js';
import { PriceResponse, ProductParams, UpdatePriceBody } from '../../../../schemas/products.js';

const adminPriceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.patch(
    '/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Products'],
        summary: 'Turn a price on or off (platform admins)',
        description:
          "`active` is a price's only editable field. 409 `active_price_exists` when turning on a price whose bundle already has an active one in that currency.",
        operationId: 'updatePrice',
        params: ProductParams,
        body: Type.Ref(UpdatePriceBody),
        response: { 200: PriceResponse, ...errorResponses(404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.products.setPriceActive(request.params.id, request.body.active),
    }),
  );
};

export default adminPriceRoutes;
