import fp from 'fastify-plugin';
import { createUsersRepository, type UsersRepository } from './repository.js';

declare module 'fastify' {
  interface FastifyInstance {
    users: UsersRepository;
  }
}

/** The users repository, shared by authentication (provisioning) and the user routes. */
export default fp(
  async (fastify) => {
    fastify.decorate(
      'users',
      createUsersRepository(fastify.db.orm, { queueLimitMs: fastify.config.databaseQueueLimitMs, log: fastify.log }),
    );
  },
  { name: 'users', dependencies: ['db', 'env'] },
);
