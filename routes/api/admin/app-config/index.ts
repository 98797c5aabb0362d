import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import { AppConfigResponse, UpdateAppConfigBody } from '../../../../schemas/misc.js';

const adminAppConfigRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.put(
    '/',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['Admin', 'Misc'],
        summary: 'Replace the mobile app configuration',
        description:
          'The whole configuration at once, with the `version` it was edited from (GET /api/app-config): 409 `app_config_changed` when another edit was saved meanwhile. Audited; every instance serves the new configuration within moments.',
        operationId: 'updateAppConfig',
        body: Type.Ref(UpdateAppConfigBody),
        response: { 200: AppConfigResponse, ...errorResponses(409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.appConfig.update(callerOf(request).id, request.body),
    }),
  );
};

export default adminAppConfigRoutes;
