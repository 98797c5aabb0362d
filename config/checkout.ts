import { allOrNone, ConfigError } from './errors.js';
import type { Env } from './schema.js';
import { parseDuration } from './units.js';

/** Stripe Checkout for coin bundles: on when every value it needs is set. */

export interface CheckoutConfig {
  secretKey: string;
  webhookSecret: string;
  /** Where the Stripe API is reached: Stripe itself, or a local stand-in. */
  apiBase?: URL;
  successUrl: string;
  cancelUrl: string;
  /** How long an order (and its Checkout Session) waits for payment: at least 30 minutes, Stripe's minimum. */
  ttlMs: number;
}

const CHECKOUT_MIN_TTL_MS = 30 * 60_000;

/** On when every Stripe value it needs is set; a partial configuration stops the start, naming what is missing. */
export function resolveCheckout(env: Env): CheckoutConfig | null {
  const values = {
    STRIPE_SECRET_KEY: env.STRIPE_SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: env.STRIPE_WEBHOOK_SECRET,
    CHECKOUT_SUCCESS_URL: env.CHECKOUT_SUCCESS_URL,
    CHECKOUT_CANCEL_URL: env.CHECKOUT_CANCEL_URL,
  };
  if (!allOrNone(values, 'checkout')) return null;
  const ttlMs = parseDuration('CHECKOUT_TTL', env.CHECKOUT_TTL);
  if (ttlMs < CHECKOUT_MIN_TTL_MS || ttlMs > 24 * 3_600_000)
    throw new ConfigError(
      'CHECKOUT_TTL',
      'must be between 30 minutes and 24 hours (what Stripe allows for a Checkout Session)',
    );
  return {
    secretKey: values.STRIPE_SECRET_KEY as string,
    webhookSecret: values.STRIPE_WEBHOOK_SECRET as string,
    apiBase: env.STRIPE_API_BASE ? new URL(env.STRIPE_API_BASE) : undefined,
    successUrl: values.CHECKOUT_SUCCESS_URL as string,
    cancelUrl: values.CHECKOUT_CANCEL_URL as string,
    ttlMs,
  };
}
