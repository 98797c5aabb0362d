import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { VersionInfo } from '../../../schemas/misc.js';

const versionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Misc'],
        summary: 'The running version: release, commit, API version, API document hash',
        description:
          'For deploy checks (is the new release serving?) and for clients (did the API document change since my client was generated?). `commit` is null when the running build did not record one. `openapiSha256` hashes the exact bytes of GET /docs/json.',
        operationId: 'getVersion',
        response: { 200: VersionInfo },
      },
    },
    async () => ({ success: true as const, data: app.versionInfo() }),
  );
};

export default versionRoutes;
