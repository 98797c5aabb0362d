import type { StripeCheckoutSession, StripeEvent } from '../../../schemas/checkout.js';
import type { CheckoutConfig } from '../../../config/index.js';

/** Stripe tolerates 5 minutes between signing a webhook and its arrival. */
const WEBHOOK_TOLERANCE_SECONDS = 300;

/** What a new Checkout Session sells: one order of one bundle, at its price. */
export interface SessionRequest {
  orderId: string;
  productName: string;
  currency: string;
  unitAmount: number;
  expiresAt: Date;
}

/**
 * The HTTP calls this service makes to Stripe, through the official SDK (loaded only when checkout
 * is configured), and the check of its webhooks' signatures. Answers Stripe's objects as the
 * schemas of what the service reads.
 */
export async function createStripeGateway(config: CheckoutConfig) {
  const stripe = new (await import('stripe')).default(config.secretKey, {
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
  });

  return {
    /** A Checkout Session paying for the order, which expires with it. */
    async createSession(request: SessionRequest): Promise<{ id: string; url: string | null }> {
      const session = await stripe.checkout.sessions.create(
        {
          mode: 'payment',
          client_reference_id: request.orderId,
          metadata: { orderId: request.orderId },
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: request.currency,
                unit_amount: request.unitAmount,
                product_data: { name: request.productName },
              },
            },
          ],
          success_url: config.successUrl,
          cancel_url: config.cancelUrl,
          expires_at: Math.floor(request.expiresAt.getTime() / 1000),
        },
        // Stripe's own idempotency: a retry of this call never makes a second session.
        { idempotencyKey: `order-${request.orderId}` },
      );
      return { id: session.id, url: session.url };
    },

    retrieveSession(id: string): Promise<StripeCheckoutSession> {
      return stripe.checkout.sessions.retrieve(id);
    },

    /** Expires an open session; Stripe refuses one that is paid or expired already. */
    expireSession(id: string): Promise<StripeCheckoutSession> {
      return stripe.checkout.sessions.expire(id);
    },

    /** The event a webhook carries, once its signature over the raw bytes is checked; throws otherwise. */
    verifyEvent(payload: Buffer, signature: string): StripeEvent {
      return stripe.webhooks.constructEvent(payload, signature, config.webhookSecret, WEBHOOK_TOLERANCE_SECONDS);
    },
  };
}

export type StripeGateway = Awaited<ReturnType<typeof createStripeGateway>>;
