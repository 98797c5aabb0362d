import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../../schemas/common.js';
import { TeamListQuery, TeamPage, TeamParams, TeamResponse } from '../../../schemas/teams.js';

const teamRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'public', lowPriority: true },
      schema: {
        tags: ['Teams'],
        summary: 'Teams, newest first',
        description: 'Public. Paginated (`limit` default 50, max 200).',
        operationId: 'listTeams',
        querystring: TeamListQuery,
        response: { 200: TeamPage },
      },
    },
    async (request) => {
      const page = await app.teams.list(request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/:teamId',
    {
      config: { auth: 'public', lowPriority: true },
      schema: {
        tags: ['Teams'],
        summary: 'A team',
        description: 'Public. An unknown id is 404 `team_not_found`.',
        operationId: 'getTeam',
        params: TeamParams,
        response: { 200: TeamResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({ success: true as const, data: await app.teams.get(request.params.teamId) }),
  );
};

export default teamRoutes;
