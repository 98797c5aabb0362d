import fp from 'fastify-plugin';
import type { EventConsumer } from '../events/service.js';
import { createLeaderboardsService, type LeaderboardsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    leaderboards: LeaderboardsService & {
      /** The consumer that keeps the live boards from the event log (run in the background, or drained by tests and the freeze job). */
      consumer: EventConsumer;
    };
  }
}

/** Leaderboards with windows: the collector board and each league's totals, kept from the event log. */
export default fp(
  async (fastify) => {
    const service = createLeaderboardsService({
      db: fastify.db,
      leagues: fastify.leagues,
      cacheMs: fastify.config.leaderboardCacheMs,
    });
    const consumer = fastify.events.consumer({
      name: 'leaderboards',
      handle: (tx, batch) => service.applyEvents(tx, batch),
    });
    fastify.decorate('leaderboards', { ...service, consumer });
  },
  { name: 'leaderboards', dependencies: ['db', 'env', 'events', 'leagues'] },
);
