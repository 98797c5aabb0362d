import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../../plugins/app/errors.js';
import { AppleNotificationBody } from '../../../schemas/app-store.js';
import { WebhookAck } from '../../../schemas/checkout.js';
import { errorResponses } from '../../../schemas/common.js';

/** The signed payload of a raw JSON body, or undefined. */
function signedPayloadOf(body: unknown): string | undefined {
  if (!Buffer.isBuffer(body)) return undefined;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { signedPayload?: unknown };
    return typeof parsed.signedPayload === 'string' ? parsed.signedPayload : undefined;
  } catch {
    return undefined;
  }
}

/** App Store Server Notifications v2: registered inside the webhooks plugin, whose bodies stay raw. */
const appleWebhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/apple',
    {
      config: { auth: 'public', rateLimit: false },
      bodyLimit: 256 * 1024,
      // The payload is checked by its signature, not by the schema (which documents it).
      validatorCompiler: () => () => true,
      schema: {
        tags: ['Webhooks'],
        summary: 'App Store Server Notifications v2 (signed)',
        description:
          "Verifies `signedPayload` with Apple's library (the chain to Apple's roots, bundle id, app Apple id, environment): anything else is 400 `invalid_signature` and changes nothing. " +
          'Each notification is handled once (its `notificationUUID` is stored with its effect); a duplicate answers 200. `REFUND` and `REVOKE` take the coins back (never below zero, the rest recorded as uncollected); `REFUND_REVERSED` gives back what they took; `CONSUMPTION_REQUEST` is answered with consumption information only when the buyer consented; `TEST` and other types are acknowledged. 503 `store_unavailable` when Apple is not configured, or the App Store Server API did not take an answer (Apple sends it again).',
        operationId: 'appleWebhook',
        body: AppleNotificationBody,
        response: { 200: WebhookAck, ...errorResponses(400, 415) },
      },
    },
    async (request) => {
      // Refused before anything is parsed or verified when Apple is not configured, like Stripe's webhook.
      app.appStore.assertConfigured();
      const signedPayload = signedPayloadOf(request.body);
      if (!signedPayload)
        throw new AppError(400, 'invalid_signature', 'The body is not a notification with a signedPayload.');
      await app.appStore.notification(signedPayload);
      return { received: true as const };
    },
  );
};

export default appleWebhookRoutes;
