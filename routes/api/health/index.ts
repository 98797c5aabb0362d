import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ServiceUnavailableError } from '../../../plugins/app/errors.js';
import { errorResponses } from '../../../schemas/common.js';
import { Liveness, Readiness } from '../../../schemas/health.js';

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      // Probes must not be rate limited: a load balancer checks often, from one address.
      config: { auth: 'public', rateLimit: false },
      schema: {
        tags: ['Misc'],
        summary: 'Liveness: the process is up',
        description: 'Answers 200 while the process can serve requests; it does not touch the database.',
        operationId: 'getHealth',
        response: { 200: Liveness },
      },
    },
    async () => ({ success: true as const, data: { status: 'ok' as const, uptimeSeconds: process.uptime() } }),
  );

  app.get(
    '/ready',
    {
      config: { auth: 'public', rateLimit: false },
      schema: {
        tags: ['Misc'],
        summary: 'Readiness: the database answers',
        description:
          'Answers 503 `not_ready` when the database does not answer within 2 seconds, and at once while the database watch has it down. A busy instance is still ready: readiness waits its turn for a database connection instead of being refused as overload.',
        operationId: 'getReadiness',
        response: { 200: Readiness, ...errorResponses(503) },
      },
    },
    async (request) => {
      try {
        await app.db.ping();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        throw new ServiceUnavailableError('not_ready', 'The database is not answering.', 5);
      }
      return { success: true as const, data: { status: 'ready' as const, database: app.db.engine } };
    },
  );
};

export default healthRoutes;
