import fp from 'fastify-plugin';
import { createUsersService, type UsersService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    users: UsersService;
  }
}

/** The users service, shared by authentication (provisioning), the user routes and the domains that name users. */
export default fp(
  async (fastify) => {
    fastify.decorate(
      'users',
      createUsersService(fastify.db.orm, { queueLimitMs: fastify.config.databaseQueueLimitMs, log: fastify.log }),
    );
  },
  { name: 'users', dependencies: ['db', 'env'] },
);
