import fastifyCors from '@fastify/cors';
import fp from 'fastify-plugin';

/**
 * Browsers may call the API from the origins in CORS_ORIGINS (any origin in development when it
 * is unset; none in production). Credentials travel in the Authorization header, never cookies.
 */
export default fp(async (fastify) => {
  const { corsOrigins } = fastify.config;
  await fastify.register(fastifyCors, {
    origin: corsOrigins === '*' ? '*' : corsOrigins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-None-Match', 'X-Request-Id'],
    exposedHeaders: ['ETag', 'Retry-After', 'X-Request-Id', 'Idempotent-Replayed', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
    maxAge: 600,
  });
}, { name: 'cors', dependencies: ['env'] });
