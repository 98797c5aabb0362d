import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import { DashboardQuery, DashboardTeamParams, TeamDashboardResponse } from '../../../../schemas/dashboard.js';

/** GET /api/admin/teams/{teamId}/dashboard: beside the team routes of index.ts, in a file of its own. */
const teamDashboardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/:teamId/dashboard',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Dashboard', 'Teams'],
        summary: "A team's dashboard",
        description: [
          'For the team’s members (viewers and up) and platform admins; another team’s dashboard answers 404 `team_not_found`.',
          'Packs sold and opened, coins taken, unique buyers, pulls by rarity, quest completions, grants and league entries',
          'over the local dates [`from`, `to`) of `timeZone`, day by day (a daylight-saving day has 23 or 25 hours);',
          'per pack: sold, opened, available, and every draw since publication against the published odds with a',
          'chi-square p-value (docs/dashboard.md). Built from rollups of the event log: `asOf` says how far they reach.',
          '400 `invalid_time_zone`, `invalid_range` (from not before to, more than 366 days, not a date).',
        ].join('\n'),
        operationId: 'getTeamDashboard',
        params: DashboardTeamParams,
        querystring: DashboardQuery,
        response: { 200: TeamDashboardResponse, ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.dashboard.team(callerOf(request), request.params.teamId, request.query),
    }),
  );
};

export default teamDashboardRoutes;
