import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { CATALOG_CACHE_CONTROL, etagMatches } from '../../../plugins/app/packs/catalog-cache.js';
import { WithHeaders } from '../../../schemas/common.js';
import { AppConfigResponse } from '../../../schemas/misc.js';

const CACHE_HEADERS = ['ETag', 'Cache-Control'];

const appConfigRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Misc'],
        summary: 'What the mobile app reads at launch',
        description: `The oldest supported app release per platform, feature flags and support links. Answered from memory, also while the database is away (the last configuration read; before any was, the default: every release supported, no flag, no link, \`version\` 0). Carries \`ETag\` and \`Cache-Control: ${CATALOG_CACHE_CONTROL}\`; a matching \`If-None-Match\` gets 304.`,
        operationId: 'getAppConfig',
        response: {
          200: WithHeaders(AppConfigResponse, CACHE_HEADERS, 'The app configuration'),
          304: WithHeaders(Type.Null(), CACHE_HEADERS, 'Not modified: the If-None-Match ETag still matches'),
        },
      },
    },
    async (request, typedReply) => {
      // The body was serialized once, when the configuration was read: sent as it is.
      const reply = typedReply as unknown as FastifyReply;
      const { body, etag } = app.appConfig.current();
      reply.header('etag', etag).header('cache-control', CATALOG_CACHE_CONTROL);
      if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
};

export default appConfigRoutes;
