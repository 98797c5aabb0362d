import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NotFoundError } from '../../../../plugins/app/errors.js';
import { errorResponses } from '../../../../schemas/common.js';
import { AdminUserResponse, UserIdParams } from '../../../../schemas/user.js';

const adminUserRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/:userId',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: 'A user the service has seen (platform admins)',
        description: 'Users are provisioned the first time their token is used; others are 404 `user_not_found`.',
        operationId: 'getAdminUser',
        params: UserIdParams,
        response: { 200: AdminUserResponse, ...errorResponses(404) },
      },
    },
    async (request) => {
      const user = await app.users.findById(request.params.userId);
      if (!user) throw new NotFoundError('user_not_found', 'No user with this id has signed in yet.');
      return {
        success: true as const,
        data: {
          id: user.id,
          displayName: user.displayName,
          role: user.role,
          createdAt: user.createdAt.toISOString(),
          lastSeenAt: user.lastSeenAt.toISOString(),
        },
      };
    },
  );
};

export default adminUserRoutes;
