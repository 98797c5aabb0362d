import fp from 'fastify-plugin';
import { EVENTS_CHANNEL } from './repository.js';
import { runInBackground } from './runner.js';
import { createEventsService, type EventsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    events: EventsService;
  }
}

/**
 * The domain event log: every domain appends in its own transactions; the consumers defined by
 * other plugins run in the background once the app is ready (unless EVENT_CONSUMERS=false), woken
 * by NOTIFY, with a poll as the fallback.
 */
export default fp(
  async (fastify) => {
    const events = createEventsService(fastify.db);
    fastify.decorate('events', events);
    if (!fastify.config.eventConsumers) return;

    let runners: ReturnType<typeof runInBackground>[] = [];
    let stopListening: (() => Promise<void>) | undefined;
    fastify.addHook('onReady', async () => {
      runners = events.consumers().map((consumer) => runInBackground(consumer, fastify.log));
      if (runners.length === 0) return;
      const wakeAll = () => {
        for (const runner of runners) runner.wake();
      };
      stopListening = await fastify.db.listen(EVENTS_CHANNEL, wakeAll, wakeAll);
      wakeAll();
    });
    fastify.addHook('preClose', async () => {
      await stopListening?.();
      await Promise.all(runners.map((runner) => runner.stop()));
    });
  },
  { name: 'events', dependencies: ['db', 'env'] },
);
