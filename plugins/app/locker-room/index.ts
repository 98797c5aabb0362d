import fp from 'fastify-plugin';
import { createLockerRoomService, type LockerRoomService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    lockerRoom: LockerRoomService;
  }
}

/** The locker room: what a fan pulled, their score and their unopened packs. */
export default fp(
  async (fastify) => {
    fastify.decorate('lockerRoom', createLockerRoomService(fastify.db));
  },
  { name: 'locker-room', dependencies: ['db'] },
);
