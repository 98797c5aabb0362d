import fp from 'fastify-plugin';
import { createPlayClient } from './client.js';
import { createPushHandler, type PushHandler } from './notifications.js';
import { createPushVerifier } from './pubsub.js';
import { createGooglePlayService, type GooglePlayService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    googlePlay: GooglePlayService;
    /** Handles one Pub/Sub push of a real-time developer notification (its OIDC token first). */
    googlePlayPush: PushHandler;
  }
}

/**
 * Coins bought in the Android app: purchases read from the Play Developer API (plain fetch, a
 * service account), credited through checkout's store orders, consumed; refunds taken back from
 * real-time developer notifications and the voided-purchases job.
 */
export default fp(
  async (fastify) => {
    const config = fastify.config.googlePlay;
    const client = config ? createPlayClient(config) : null;
    const verify = config?.pubsub
      ? await createPushVerifier(config.pubsub, fastify.config.auth.jwksLookupIntervalMs)
      : null;
    const service = createGooglePlayService({
      db: fastify.db,
      client,
      log: fastify.log,
      orders: fastify.checkout,
      products: {
        findByGoogleProductId: (sku) => fastify.products.findByStoreSku('google', sku),
      },
      users: fastify.users,
    });
    fastify.decorate('googlePlay', service);
    fastify.decorate(
      'googlePlayPush',
      createPushHandler({
        db: fastify.db,
        verify,
        packageName: config?.packageName ?? null,
        service,
        log: fastify.log,
      }),
    );
  },
  { name: 'google-play', dependencies: ['db', 'env', 'checkout', 'products', 'users'] },
);
