import fp from 'fastify-plugin';
import { APP_CONFIG_CHANNEL } from './repository.js';
import { type AppConfigService, createAppConfigService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    appConfig: AppConfigService;
  }
}

/** A re-read now and then, in case a notification was lost without the listener noticing. */
const RESYNC_INTERVAL_MS = 60_000;

/**
 * The mobile app configuration, held in memory on every instance: read at start, and again when
 * any instance saves an edit (PostgreSQL NOTIFY), when the LISTEN connection comes back after a
 * loss (an edit may have been missed), and every minute. A read that fails keeps what was held.
 */
export default fp(
  async (fastify) => {
    const service = createAppConfigService(fastify.db, fastify.audit);
    const refresh = (reason: string) =>
      service
        .refresh()
        .catch((error) =>
          fastify.log.warn({ err: error, reason }, 'app configuration not re-read; serving the last one known'),
        );
    const stopListening = await fastify.db.listen(
      APP_CONFIG_CHANNEL,
      () => void refresh('edited'),
      () => void refresh('listen gap'),
    );
    await refresh('start');
    const timer = setInterval(() => void refresh('resync'), RESYNC_INTERVAL_MS);
    timer.unref();
    fastify.addHook('preClose', async () => {
      clearInterval(timer);
      await stopListening();
    });
    fastify.decorate('appConfig', service);
  },
  { name: 'app-config', dependencies: ['db', 'audit'] },
);
