import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../../../plugins/app/auth/index.js';
import { GrantListQuery, GrantPage } from '../../../schemas/rewards.js';

const rewardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/grants',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Rewards'],
        summary: 'Your rewards, newest first',
        description:
          'Every reward given to you, with what it gave and, when revoked, what was taken back. Paginated (`limit` default 50, max 200).',
        operationId: 'listMyGrants',
        querystring: GrantListQuery,
        response: { 200: GrantPage },
      },
    },
    async (request) => {
      const page = await app.rewards.grants(callerOf(request).id, request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );
};

export default rewardRoutes;
