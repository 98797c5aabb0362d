import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { webhookRoutes } from './routes.js';

/** The platform's own webhook endpoints: platform admins register them; they receive every team's events. */
const adminWebhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  webhookRoutes(app, {
    base: '',
    params: Type.Object({}, { additionalProperties: false }),
    scopeOf: () => ({ teamId: null }),
    name: 'Platform',
    who: 'platform admins (these endpoints receive the events of every team and of none)',
  });
};

export default adminWebhookRoutes;
