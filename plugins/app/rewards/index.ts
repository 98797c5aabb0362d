import fp from 'fastify-plugin';
import { createRewardsService, type RewardsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    rewards: RewardsService;
  }
}

/** The grant engine: rewards, the inventory promised to them, and grants given at most once per source key. */
export default fp(
  async (fastify) => {
    fastify.decorate(
      'rewards',
      createRewardsService({
        db: fastify.db,
        wallets: fastify.wallets,
        purchases: fastify.purchases,
        teams: fastify.teams,
        users: fastify.users,
        events: fastify.events,
        audit: fastify.audit,
      }),
    );
  },
  { name: 'rewards', dependencies: ['db', 'wallets', 'purchases', 'teams', 'users', 'events', 'audit'] },
);
