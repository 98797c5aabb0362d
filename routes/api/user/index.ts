import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CurrentUserResponse } from '../../../schemas/user.js';

const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['User'],
        summary: 'The signed-in caller, provisioned on first call',
        operationId: 'getCurrentUser',
        response: { 200: CurrentUserResponse },
      },
    },
    async (request) => {
      // `config.auth` guarantees the caller; the non-null assertion documents that contract.
      const caller = request.caller!;
      return {
        success: true as const,
        data: {
          id: caller.id,
          displayName: caller.displayName,
          isAdmin: caller.isAdmin,
          teams: [],
          createdAt: caller.user.createdAt.toISOString(),
        },
      };
    },
  );
};

export default userRoutes;
