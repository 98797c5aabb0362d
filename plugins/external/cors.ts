import fastifyCors from '@fastify/cors';
import fp from 'fastify-plugin';

/**
 * Browsers may call the API from the origins in CORS_ORIGINS (any origin in development when it
 * is unset; none in production, where the plugin is then not registered at all). Credentials
 * travel in the Authorization header, never cookies.
 */
export default fp(
  async (fastify) => {
    const { corsOrigins } = fastify.config;
    // No allowed origin (the production default): no CORS headers at all, so browsers refuse
    // cross-origin calls, and no request pays for the check.
    if (corsOrigins !== '*' && corsOrigins.length === 0) return;
    // The preflight route @fastify/cors adds answers anyone: declare it public (plugins/app/access.ts).
    fastify.addHook('onRoute', (route) => {
      if (route.method === 'OPTIONS' && route.url === '*') route.config = { ...route.config, auth: 'public' };
    });
    await fastify.register(fastifyCors, {
      origin: corsOrigins === '*' ? '*' : corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'If-None-Match', 'X-Request-Id'],
      exposedHeaders: [
        'ETag',
        'Retry-After',
        'X-Request-Id',
        'Idempotent-Replayed',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'RateLimit-Policy',
        'RateLimit',
      ],
      maxAge: 600,
    });
  },
  { name: 'cors', dependencies: ['env'] },
);
