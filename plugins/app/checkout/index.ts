import fp from 'fastify-plugin';
import type { StripeEvent } from '../../../schemas/checkout.js';
import { createStripeGateway } from './gateway.js';
import { type CheckoutService, createCheckoutService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    checkout: CheckoutService;
    /** Verifies a Stripe webhook over its raw bytes; null when checkout is not configured. */
    verifyStripeEvent: ((payload: Buffer, signature: string) => StripeEvent) | null;
  }
}

/** Orders of coin bundles, paid through Stripe Checkout (the official SDK); coins move through wallets. */
export default fp(
  async (fastify) => {
    const config = fastify.config.checkout;
    const gateway = config ? await createStripeGateway(config) : null;
    fastify.decorate(
      'checkout',
      createCheckoutService({
        db: fastify.db,
        gateway,
        config,
        log: fastify.log,
        wallets: fastify.wallets,
        events: fastify.events,
        products: fastify.products,
      }),
    );
    fastify.decorate('verifyStripeEvent', gateway ? gateway.verifyEvent : null);
  },
  { name: 'checkout', dependencies: ['db', 'env', 'products', 'wallets', 'events'] },
);
