import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { WebhookAck } from '../../../schemas/checkout.js';
import { errorResponses } from '../../../schemas/common.js';
import { PubSubPushBody } from '../../../schemas/google-play.js';

/** Google Play's real-time developer notifications, pushed by Pub/Sub. Registered inside the raw-body webhooks plugin. */
const googleWebhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/google',
    {
      // Pub/Sub retries with backoff; a 429 would only delay refunds. A forged push costs one signature check.
      config: { auth: 'public', rateLimit: false },
      bodyLimit: 64 * 1024,
      // The body is read only once the push's token is verified: the schema documents it.
      validatorCompiler: () => () => true,
      schema: {
        tags: ['Webhooks'],
        summary: 'Google Play real-time developer notifications (Pub/Sub push)',
        description:
          'Verifies the push’s OIDC token (`Authorization: Bearer`: signed by Google, issuer accounts.google.com, audience `GOOGLE_PUBSUB_AUDIENCE`, `email` = `GOOGLE_PUBSUB_SERVICE_ACCOUNT`, verified) before reading the body: missing or wrong is 401 and nothing happens. ' +
          'Each message is handled once by its `messageId` (a redelivery answers 200). The notification only names a purchase, which is read again from Google: `oneTimeProductNotification` purchased credits it to the account it was made for, cancelled takes back coins credited; `voidedPurchaseNotification` takes the coins back (never below zero; the rest recorded as uncollected); `testNotification` is acknowledged. ' +
          '400 `invalid_push` (not a Pub/Sub push); 502 `store_error` when Google refuses our request or answers unreadably; 503 `store_unavailable` when Google Play or the push is not configured, `store_unreachable` when Google does not answer, `auth_unavailable` when Google’s keys cannot be fetched (Pub/Sub delivers again).',
        operationId: 'googlePlayNotification',
        body: PubSubPushBody,
        response: { 200: WebhookAck, ...errorResponses(400, 401, 415, 502) },
      },
    },
    async (request) => {
      await app.googlePlayPush(request.headers.authorization, request.body);
      return { received: true as const };
    },
  );
};

export default googleWebhookRoutes;
