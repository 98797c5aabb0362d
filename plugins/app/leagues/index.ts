import fp from 'fastify-plugin';
import { createLeagueAdmin, type LeagueAdmin } from './admin.js';
import { createRoundFinalizer, type RoundFinalizer } from './finalize.js';
import { createLeaguesService, type LeaguesService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    leagues: LeaguesService & {
      admin: LeagueAdmin;
      /** Finalization (phase 1 `rank`, phase 2 `payPrizes`, both `finalize`) and the job's `advance`. */
      finalizer: RoundFinalizer;
    };
  }
}

/** Leagues: rounds, lineups of owned copies, scores, frozen standings and their prizes through the grant engine. */
export default fp(
  async (fastify) => {
    const db = fastify.db;
    fastify.decorate('leagues', {
      ...createLeaguesService({
        db,
        lockerRoom: fastify.lockerRoom,
        users: fastify.users,
        cacheMs: fastify.config.leaderboardCacheMs,
      }),
      admin: createLeagueAdmin({ db, audit: fastify.audit, teams: fastify.teams, rewards: fastify.rewards }),
      finalizer: createRoundFinalizer({
        db,
        audit: fastify.audit,
        events: fastify.events,
        rewards: fastify.rewards,
        log: fastify.log,
      }),
    });
  },
  { name: 'leagues', dependencies: ['db', 'env', 'events', 'audit', 'teams', 'rewards', 'users', 'locker-room'] },
);
