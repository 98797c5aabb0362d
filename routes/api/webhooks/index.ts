import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, ServiceUnavailableError } from '../../../plugins/app/errors.js';
import { errorResponses } from '../../../schemas/common.js';
import { StripeEventBody, WebhookAck } from '../../../schemas/checkout.js';
import googleWebhookRoutes from './google.js';
import appleWebhookRoutes from './apple.js';

/** Incoming webhooks. Only this plugin keeps request bodies raw: the signature covers the exact bytes. */
const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post(
    '/stripe',
    {
      // Stripe delivers bursts from a few addresses; a 429 would only delay payments. A forged call
      // costs one HMAC before it is refused, and the body limit bounds it.
      config: { auth: 'public', rateLimit: false },
      // Stripe's events are a few kilobytes; an unsigned megabyte should not be read to be refused.
      bodyLimit: 256 * 1024,
      // The body stays raw bytes, checked by its signature: the schema below documents it, and
      // validating it would mean parsing bytes no one has verified yet.
      validatorCompiler: () => () => true,
      schema: {
        tags: ['Webhooks'],
        summary: 'Stripe events (signed)',
        description:
          'Verifies `Stripe-Signature` over the raw body (5 minutes of tolerance) before reading it: a bad, missing or stale signature is 400 `invalid_signature` and nothing is stored. ' +
          'Each event is handled once (its id is stored with its effect); a duplicate or an ignored type answers 200. Handled: `checkout.session.completed`, ' +
          '`checkout.session.async_payment_succeeded`, `checkout.session.async_payment_failed`, `checkout.session.expired`, `charge.refunded` (the refunded share of the coins taken back, never below zero; the rest recorded as uncollected), `charge.dispute.created` and `charge.dispute.closed` (a won dispute returns the coins). 503 `checkout_unavailable` when Stripe is not configured.',
        operationId: 'stripeWebhook',
        body: StripeEventBody,
        response: { 200: WebhookAck, ...errorResponses(415) },
      },
    },
    async (request) => {
      const verify = app.verifyStripeEvent;
      if (!verify)
        throw new ServiceUnavailableError('checkout_unavailable', 'Checkout is not configured on this service.');
      const signature = request.headers['stripe-signature'];
      let event: ReturnType<typeof verify>;
      try {
        if (typeof signature !== 'string' || !Buffer.isBuffer(request.body)) throw new Error('no signature or no body');
        event = verify(request.body, signature);
      } catch (error) {
        request.log.warn({ reason: (error as Error).message }, 'Stripe webhook refused: bad signature');
        throw new AppError(
          400,
          'invalid_signature',
          'The Stripe-Signature header does not match this body and secret, or is too old.',
        );
      }
      await app.checkout.handleEvent(event);
      return { received: true as const };
    },
  );

  // Registered here so it shares the raw-body parser above.
  await app.register(googleWebhookRoutes);
  // Inside this plugin, so its body stays raw like Stripe's.
  await app.register(appleWebhookRoutes);
};

export default webhookRoutes;
