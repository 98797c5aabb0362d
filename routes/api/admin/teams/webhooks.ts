import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TeamParams } from '../../../../schemas/teams.js';
import { webhookRoutes } from '../webhooks/routes.js';

/** A team's webhook endpoints, under /api/admin/teams/{teamId}/webhooks: they receive that team's events only. */
const teamWebhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  webhookRoutes(app, {
    base: '/:teamId/webhooks',
    params: TeamParams,
    scopeOf: (params) => ({ teamId: params.teamId as string }),
    name: 'Team',
    who: 'the team’s owners and platform admins (editors and viewers: 403)',
  });
};

export default teamWebhookRoutes;
