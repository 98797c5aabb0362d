import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../plugins/app/auth/index.js';
import {
  AppleAccountResponse,
  ApplePurchaseBody,
  StorePurchaseResponse,
  UpdateAppleAccountBody,
} from '../../../schemas/app-store.js';
import { errorResponses } from '../../../schemas/common.js';

/** Coins bought in the iOS app: the app reports each StoreKit transaction here. */
const appleCheckoutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/apple',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Checkout'],
        summary: 'Credit an App Store purchase of a coin bundle',
        description:
          "Verifies StoreKit's signed transaction with Apple's library (the certificate chain to Apple's roots, the bundle id, the environment), then credits the bundle named by its `appleProductId` once per `transactionId`: 201 when credited now, 200 with the same order when it was credited before (a retry is safe). " +
          "The transaction must be a consumable whose `appAccountToken` is the caller's (see `GET /api/checkout/apple/account`). " +
          '400 `invalid_signed_data` (not signed by Apple for this app, or the wrong environment), 403 `store_account_mismatch`, 404 `store_product_not_found`, 409 `store_purchase_not_consumable`, `store_purchase_revoked` (refunded or revoked), `store_purchase_claimed` (credited to another account), 503 `store_unavailable` (Apple not configured).',
        operationId: 'creditApplePurchase',
        body: Type.Ref(ApplePurchaseBody),
        response: { 200: StorePurchaseResponse, 201: StorePurchaseResponse, ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const result = await app.appStore.purchase(callerOf(request).id, request.body.signedTransaction);
      return reply.code(result.credited ? 201 : 200).send({ success: true as const, data: result });
    },
  );

  app.get(
    '/apple/account',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Checkout'],
        summary: 'Your App Store account token and consent',
        description:
          'The `appAccountToken` the app must set on every purchase (a purchase carrying another is refused), and whether you agreed to share consumption information with Apple when you ask it for a refund (default: no).',
        operationId: 'getAppleAccount',
        response: { 200: AppleAccountResponse },
      },
    },
    async (request) => ({ success: true as const, data: await app.appStore.account(callerOf(request).id) }),
  );

  app.put(
    '/apple/account',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Checkout'],
        summary: 'Consent (or not) to share consumption information with Apple',
        description:
          'When you ask Apple for a refund of coins, Apple may ask this service how many of them you used; the answer is sent only with your consent.',
        operationId: 'updateAppleAccount',
        body: Type.Ref(UpdateAppleAccountBody),
        response: { 200: AppleAccountResponse },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.appStore.setConsent(callerOf(request).id, request.body.consumptionDataConsent),
    }),
  );
};

export default appleCheckoutRoutes;
