import fastifySensible from '@fastify/sensible';
import fp from 'fastify-plugin';

/** HTTP helpers (reply.notFound, httpErrors, assert) used where a domain error would be overkill. */
export default fp(
  async (fastify) => {
    await fastify.register(fastifySensible);
  },
  { name: 'sensible' },
);
