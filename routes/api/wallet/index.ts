import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../../../plugins/app/auth/index.js';
import { LedgerPage, LedgerQuery, WalletResponse } from '../../../schemas/wallets.js';

const walletRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Wallets'],
        summary: 'Your balance',
        description: 'Integer coins; 0 before the first credit.',
        operationId: 'getWallet',
        response: { 200: WalletResponse },
      },
    },
    async (request) => ({ success: true as const, data: await app.wallets.wallet(callerOf(request).id) }),
  );

  app.get(
    '/transactions',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Wallets'],
        summary: 'Your ledger, newest first',
        description:
          'Every change of the balance, append-only: `amount` (signed), `balanceAfter`, `kind` and what caused it. Paginated (`limit` default 50, max 200).',
        operationId: 'listWalletTransactions',
        querystring: LedgerQuery,
        response: { 200: LedgerPage },
      },
    },
    async (request) => {
      const page = await app.wallets.transactions(callerOf(request).id, request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );
};

export default walletRoutes;
