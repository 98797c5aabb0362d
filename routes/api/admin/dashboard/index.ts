import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import { DashboardQuery, PlatformDashboardResponse } from '../../../../schemas/dashboard.js';

const adminDashboardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Dashboard', 'Admin'],
        summary: "The platform's dashboard (platform admins)",
        description: [
          'Every team’s figures together (packs of no team included), day by day in `timeZone`, and money per',
          'currency: the coin orders paid in the range, what they took (gross), and what has since been refunded,',
          'disputed or left uncollected. Refunds are never counted as revenue. Query as for a team’s dashboard.',
        ].join('\n'),
        operationId: 'getPlatformDashboard',
        querystring: DashboardQuery,
        response: { 200: PlatformDashboardResponse, ...errorResponses(400) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.dashboard.platform(callerOf(request), request.query),
    }),
  );
};

export default adminDashboardRoutes;
