import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AdminOrderPage, AdminOrderQuery } from '../../../../schemas/checkout.js';

const adminOrderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Checkout'],
        summary: 'Orders of every user, newest first (platform admins)',
        description: '`uncollected=true`: only the orders whose refunds could not take back every coin (the balance had been spent), with how many.',
        operationId: 'adminListOrders',
        querystring: AdminOrderQuery,
        response: { 200: AdminOrderPage },
      },
    },
    async (request) => {
      const page = await app.checkout.adminOrders(request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );
};

export default adminOrderRoutes;
