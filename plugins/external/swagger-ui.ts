import fastifySwaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';

/**
 * Swagger UI at /docs. Its pages carry Swagger UI's own content-security policy (hashes of its
 * inline code) instead of the API's strict one, which would break them; the Authorize button's
 * token survives reloads.
 */
export default fp(async (fastify) => {
  await fastify.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, docsPage: true };
    });
    await docs.register(fastifySwaggerUi, {
      routePrefix: '/docs',
      staticCSP: true,
      uiConfig: { persistAuthorization: true, deepLinking: true, displayRequestDuration: true },
    });
  });
}, { name: 'swagger-ui', dependencies: ['swagger', 'helmet'] });
