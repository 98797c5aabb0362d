import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../plugins/app/auth/index.js';
import {
  CheckoutSessionResponse,
  CreateCheckoutBody,
  OrderPage,
  OrderParams,
  OrderQuery,
  OrderResponse,
} from '../../../schemas/checkout.js';
import { errorResponses, WithHeaders } from '../../../schemas/common.js';
import googleCheckoutRoutes from './google.js';
import appleCheckoutRoutes from './apple.js';

const checkoutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(appleCheckoutRoutes);

  app.post(
    '/sessions',
    {
      config: { auth: 'user', idempotent: true },
      schema: {
        tags: ['Checkout'],
        summary: 'Buy a coin bundle: an order and its Stripe Checkout Session',
        description:
          'Makes a pending order of the price (its coins, amount and currency kept as they are now) and a Stripe Checkout Session for it; ' +
          'send the buyer to `url`. The coins arrive when Stripe reports the payment. Send an Idempotency-Key so a retry makes no second order. ' +
          '404 `price_not_found`, 409 `price_inactive`, 409 `balance_limit` (the wallet could not take the coins), 503 `checkout_unavailable` (Stripe not configured or not answering).',
        operationId: 'createCheckoutSession',
        body: Type.Ref(CreateCheckoutBody),
        response: { 201: WithHeaders(CheckoutSessionResponse, ['Idempotent-Replayed']), ...errorResponses(404, 409) },
      },
    },
    async (request, reply) =>
      reply.sendOutcome(
        await app.idempotentChange(
          request,
          201,
          async (tx, prepared) => ({ success: true as const, data: await app.checkout.recordCheckout(tx, prepared) }),
          // Stripe is called before the transaction, so a slow Stripe holds no database connection.
          () => app.checkout.prepareCheckout(callerOf(request).id, request.body.priceId),
        ),
      ),
  );

  app.get(
    '/orders',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Checkout'],
        summary: 'Your orders, newest first',
        description: 'Paginated (`limit` default 50, max 200).',
        operationId: 'listOrders',
        querystring: OrderQuery,
        response: { 200: OrderPage },
      },
    },
    async (request) => {
      const page = await app.checkout.orders(callerOf(request).id, request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/orders/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Checkout'],
        summary: 'One of your orders',
        description:
          'A pending order older than a minute is re-checked with Stripe first, and fulfilled if it was paid: a missed webhook costs nobody their coins. 404 `order_not_found`.',
        operationId: 'getOrder',
        params: OrderParams,
        response: { 200: OrderResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.checkout.order(callerOf(request).id, request.params.id),
    }),
  );

  await app.register(googleCheckoutRoutes);
};

export default checkoutRoutes;
