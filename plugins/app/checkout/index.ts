import fp from 'fastify-plugin';
import { type CheckoutService, createCheckoutService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    checkout: CheckoutService;
    /** Verifies a Stripe webhook over its raw bytes; null when checkout is not configured. */
    verifyStripeEvent: ((payload: Buffer, signature: string) => import('stripe').Stripe.Event) | null;
  }
}

/** Stripe tolerates 5 minutes between signing a webhook and its arrival. */
const WEBHOOK_TOLERANCE_SECONDS = 300;

/** Orders of coin bundles, paid through Stripe Checkout (the official SDK). */
export default fp(
  async (fastify) => {
    const config = fastify.config.checkout;
    const stripe = config
      ? new (await import('stripe')).default(config.secretKey, {
          maxNetworkRetries: 1,
          timeout: 10_000,
          telemetry: false,
          // STRIPE_API_BASE points at a local stand-in in tests and development.
          ...(config.apiBase
            ? {
                host: config.apiBase.hostname,
                port: config.apiBase.port || (config.apiBase.protocol === 'https:' ? 443 : 80),
                protocol: config.apiBase.protocol.replace(':', '') as 'http' | 'https',
              }
            : {}),
        })
      : null;
    fastify.decorate('checkout', createCheckoutService(fastify.db, stripe, config, fastify.log));
    fastify.decorate(
      'verifyStripeEvent',
      stripe && config
        ? (payload: Buffer, signature: string) =>
            stripe.webhooks.constructEvent(payload, signature, config.webhookSecret, WEBHOOK_TOLERANCE_SECONDS)
        : null,
    );
  },
  { name: 'checkout', dependencies: ['db', 'products', 'wallets'] },
);
