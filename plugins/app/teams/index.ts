import fp from 'fastify-plugin';
import { createTeamsService, type TeamsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    teams: TeamsService;
  }
}

/** Teams and their members (TeamAdmin rows). */
export default fp(
  async (fastify) => {
    fastify.decorate(
      'teams',
      createTeamsService({ db: fastify.db, audit: fastify.audit, users: fastify.users, events: fastify.events }),
    );
  },
  { name: 'teams', dependencies: ['db', 'audit', 'users', 'events'] },
);
