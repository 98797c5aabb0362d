import fp from 'fastify-plugin';
import type { EventConsumer } from '../events/service.js';
import { fanOut } from './fan-out.js';
import { DELIVERIES_CHANNEL, pruneEnded } from './repository.js';
import { DELIVERY_RETENTION_MS } from './rules.js';
import { createSender, runSenderInBackground, type Sender } from './sender.js';
import { createWebhookAdmin, type WebhookAdmin } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookAdmin & {
      /** The event-log consumer that turns events into deliveries (run in the background, or drained by tests). */
      consumer: EventConsumer;
      /** Sends due deliveries (in the background with the consumers; `runDue` for tests and scripts). */
      sender: Sender;
      /**
       * The job: deletes up to `limit` deliveries that ended more than DELIVERY_RETENTION_MS before
       * `now` (default: now), with their attempts; answers how many.
       */
      prune(limit: number, now?: Date): Promise<number>;
    };
  }
}

/**
 * Outbound webhooks: endpoints registered by team owners and platform admins; an event-log
 * consumer creates the deliveries; the sender, in the background of every instance (with
 * EVENT_CONSUMERS), claims and sends them, woken by NOTIFY with a poll as the fallback.
 */
export default fp(
  async (fastify) => {
    const allowPrivateTargets = fastify.config.webhooks.allowPrivateTargets;
    const sender = createSender({ db: fastify.db, log: fastify.log, allowPrivateTargets });
    const consumer = fastify.events.consumer({ name: 'webhooks', handle: fanOut });
    fastify.decorate('webhooks', {
      ...createWebhookAdmin({
        db: fastify.db,
        teams: fastify.teams,
        audit: fastify.audit,
        sender,
        allowPrivateTargets,
      }),
      consumer,
      sender,
      prune: (limit, now = new Date()) =>
        pruneEnded(fastify.db.orm, new Date(now.getTime() - DELIVERY_RETENTION_MS), limit),
    });
    if (!fastify.config.eventConsumers) return;

    let background: ReturnType<typeof runSenderInBackground> | undefined;
    let stopListening: (() => Promise<void>) | undefined;
    fastify.addHook('onReady', async () => {
      const running = runSenderInBackground(sender, fastify.log);
      background = running;
      stopListening = await fastify.db.listen(DELIVERIES_CHANNEL, running.wake, running.wake);
      running.wake();
    });
    fastify.addHook('preClose', async () => {
      await stopListening?.();
      await background?.stop();
    });
  },
  { name: 'webhooks', dependencies: ['db', 'env', 'events', 'teams', 'audit'] },
);
