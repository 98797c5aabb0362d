import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses, WithHeaders } from '../../../../schemas/common.js';
import { LedgerEntryResponse, WalletAdjustmentBody, WalletUserParams } from '../../../../schemas/wallets.js';

const adminWalletRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/:userId/adjustments',
    {
      config: { auth: 'admin', idempotent: true },
      schema: {
        tags: ['Wallets'],
        summary: "Credit or debit a user's wallet (platform admins)",
        description:
          'Appends one `adjustment` entry with its reason. 409 `insufficient_funds` when a debit would take the balance below 0 (nothing is written); 404 `user_not_found` for a user who never signed in. Send an Idempotency-Key so a retry cannot credit twice.',
        operationId: 'adjustWallet',
        params: WalletUserParams,
        body: Type.Ref(WalletAdjustmentBody),
        response: {
          201: WithHeaders(LedgerEntryResponse, ['Idempotent-Replayed'], 'The ledger entry'),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request, reply) =>
      reply.sendOutcome(
        await app.idempotentChange(request, 201, async (tx) => ({
          success: true as const,
          data: await app.wallets.adjust(tx, callerOf(request).id, request.params.userId, request.body),
        })),
      ),
  );
};

export default adminWalletRoutes;
