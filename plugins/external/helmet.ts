import fastifyHelmet from '@fastify/helmet';
import fp from 'fastify-plugin';

/**
 * Security headers on every response. The API serves JSON only, so the default policy is strict;
 * Swagger UI's pages bring their own policy (see swagger-ui.ts).
 */
export default fp(async (fastify) => {
  await fastify.register(fastifyHelmet, {
    global: true,
    // HSTS belongs to the TLS-terminating proxy, which knows whether HTTPS is really in use.
    hsts: fastify.config.isProduction,
  });
}, { name: 'helmet' });
