import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope } from '../../../schemas/common.js';
import { ExpireResult } from '../../../schemas/purchases.js';

const cronRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/expire-purchases',
    {
      config: { auth: 'cron' },
      schema: {
        tags: ['Cron'],
        summary: 'Expire pending purchases past their time',
        description:
          'For an external scheduler, with `Authorization: Bearer <CRON_SECRET>` (401 otherwise). The same job runs in-process every minute unless CRON_INTERNAL=false; several runs at once are safe. An expired reservation never blocked a sale even before this marks it.',
        operationId: 'expirePurchases',
        response: { 200: Envelope(ExpireResult) },
      },
    },
    async () => ({ success: true as const, data: await app.jobs.expirePurchases() }),
  );
};

export default cronRoutes;
