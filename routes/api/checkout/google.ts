import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../schemas/common.js';
import { GoogleCheckoutBody, GoogleCheckoutResponse } from '../../../schemas/google-play.js';

/** Coins bought in the Android app: the app reports a Google Play purchase. */
const googleCheckoutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/google',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Checkout'],
        summary: 'Credit a Google Play purchase',
        description:
          'The app sends the Play product id and the purchase token Play Billing gave it. The purchase is read from the Play Developer API (never taken from the app): ' +
          'purchased, made for the caller (`obfuscatedExternalAccountId` = the caller’s user id, set by the app at purchase), it is credited once per Google order, then consumed. ' +
          '200 `credited` or `already_credited` (a replay answers the same order and credits nothing); 202 `pending` (not paid yet: nothing credited; send it again when Play Billing reports it purchased). ' +
          '404 `store_product_not_found` (no bundle has this `googleProductId`), 404 `store_purchase_not_found`, 403 `store_purchase_not_yours`, 409 `store_purchase_claimed` (credited to another account), ' +
          '409 `store_purchase_cancelled`, 409 `store_purchase_unsupported`, 409 `balance_limit`, 502 `store_error`, 503 `store_unreachable`, 503 `store_unavailable` (Google Play not configured).',
        operationId: 'creditGooglePlayPurchase',
        body: GoogleCheckoutBody,
        response: {
          200: GoogleCheckoutResponse,
          202: { ...GoogleCheckoutResponse, description: 'Pending: nothing credited yet' },
          ...errorResponses(403, 404, 409, 502),
        },
      },
    },
    async (request, reply) => {
      const outcome = await app.googlePlay.checkout(
        callerOf(request).id,
        request.body.productId,
        request.body.purchaseToken,
      );
      return reply.code(outcome.status === 'pending' ? 202 : 200).send({ success: true as const, data: outcome });
    },
  );
};

export default googleCheckoutRoutes;
