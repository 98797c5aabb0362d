import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { AuditLogPage, AuditLogQuery } from '../../../../schemas/audit.js';
import { errorResponses } from '../../../../schemas/common.js';

const auditLogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: 'The audit log, newest first',
        description:
          'Every admin change: who, when, what, and the target before and after. Filter by `teamId` and `targetId`; paginated.',
        operationId: 'listAuditLog',
        querystring: AuditLogQuery,
        response: { 200: AuditLogPage, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const page = await app.audit.list(callerOf(request), request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );
};

export default auditLogRoutes;
