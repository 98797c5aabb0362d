import { ConfigError } from './errors.js';
import type { Env } from './schema.js';

/** Outbound webhooks' configuration. */

export interface WebhooksConfig {
  /**
   * Let deliveries reach loopback, private, link-local and other non-public addresses, and http
   * URLs: for development and tests, whose receivers run on this machine. Never in production.
   */
  allowPrivateTargets: boolean;
}

/** Refuses to start a production service that would let webhooks reach the private network. */
export function resolveWebhooks(env: Env, isProduction: boolean): WebhooksConfig {
  if (env.WEBHOOKS_ALLOW_PRIVATE_TARGETS && isProduction)
    throw new ConfigError(
      'WEBHOOKS_ALLOW_PRIVATE_TARGETS',
      'must not be true in production: outbound webhooks would reach loopback, private and cloud metadata addresses',
    );
  return { allowPrivateTargets: env.WEBHOOKS_ALLOW_PRIVATE_TARGETS && !isProduction };
}
