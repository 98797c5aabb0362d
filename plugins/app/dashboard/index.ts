import fp from 'fastify-plugin';
import type { EventConsumer } from '../events/service.js';
import { CONSUMER } from './repository.js';
import { createDashboardService, type DashboardService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    dashboard: DashboardService & {
      /** The consumer that adds the event log to the rollups (run in the background, or drained by tests). */
      consumer: EventConsumer;
    };
  }
}

/** Dashboards: rollups of the event log per team and UTC hour, read in the days of any time zone. */
export default fp(
  async (fastify) => {
    const service = createDashboardService({
      db: fastify.db,
      packs: fastify.packs,
      teams: fastify.teams,
      cacheMs: fastify.config.dashboardCacheMs,
    });
    const consumer = fastify.events.consumer({ name: CONSUMER, handle: service.handle });
    fastify.decorate('dashboard', { ...service, consumer });
  },
  { name: 'dashboard', dependencies: ['env', 'db', 'events', 'packs', 'teams'] },
);
