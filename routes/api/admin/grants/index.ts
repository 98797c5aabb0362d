import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import { GrantParams, GrantResponse, RevokeGrantBody } from '../../../../schemas/rewards.js';

const adminGrantRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Rewards'],
        summary: 'A grant',
        description: "Admins of the reward's scope.",
        operationId: 'getGrant',
        params: GrantParams,
        response: { 200: GrantResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.rewards.getGrant(callerOf(request), request.params.id),
    }),
  );

  app.post(
    '/:id/revoke',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Rewards'],
        summary: 'Revoke a grant',
        description:
          'A reversal, never a deletion: the coins are taken back as far as the wallet holds them (`coinsUncollected` records the rest), unopened packs are taken back and return to their supply, ' +
          'opened packs and collectibles stay with the fan (`packsKept`, `collectiblesKept`). Revoking a revoked grant answers it unchanged.',
        operationId: 'revokeGrant',
        params: GrantParams,
        body: Type.Ref(RevokeGrantBody),
        response: { 200: GrantResponse, ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.rewards.revoke(callerOf(request), request.params.id, request.body),
    }),
  );
};

export default adminGrantRoutes;
