import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import {
  AdminOrderPage,
  AdminOrderQuery,
  AdminOrderResponse,
  OrderParams,
  UpdateOrderBody,
} from '../../../../schemas/checkout.js';
import { errorResponses } from '../../../../schemas/common.js';

const adminOrderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Checkout'],
        summary: 'Orders of every user, newest first (platform admins)',
        description:
          '`uncollected=true`: only the orders whose refunds or disputes could not take back every coin (the balance had been spent), with how many. ' +
          '`needsReview=true`: only paid orders that were not credited as usual (the payment did not match the order, the wallet was full, or it was paid after the order expired).',
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

  app.patch(
    '/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Checkout'],
        summary: 'Mark an order reviewed (platform admins)',
        description:
          '`needsReview` is the only editable field of an order: clear it once the payment was refunded in Stripe or the coins credited by hand. A full refund in Stripe clears it by itself.',
        operationId: 'adminUpdateOrder',
        params: OrderParams,
        body: Type.Ref(UpdateOrderBody),
        response: { 200: AdminOrderResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.checkout.reviewOrder(request.params.id, request.body.needsReview),
    }),
  );

  app.post(
    '/:id/credit',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Checkout'],
        summary: 'Credit a paid order that was never credited (platform admins)',
        description:
          'For an order flagged `balance_limit` (the wallet was full) or `paid_after_expiry`: it becomes `fulfilled` with its one `topup`, so a later refund or dispute takes the coins back as for any order, and the flag is cleared. ' +
          '409 `order_not_creditable` for any other order (refund a mismatched payment in Stripe instead), 409 `balance_limit` while the wallet still cannot take the coins, 404 `order_not_found`.',
        operationId: 'adminCreditOrder',
        params: OrderParams,
        response: { 200: AdminOrderResponse, ...errorResponses(404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.checkout.creditReviewedOrder(request.params.id, callerOf(request).id),
    }),
  );
};

export default adminOrderRoutes;
