import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { CATALOG_CACHE_CONTROL, listKey, packKey } from '../../../plugins/app/packs/catalog-cache.js';
import { errorResponses, WithHeaders } from '../../../schemas/common.js';
import { PackParams, PublicPackDetail, PublicPackList, PublicPackListQuery } from '../../../schemas/packs.js';

const CACHE_HEADERS = ['ETag', 'Cache-Control'];
const NotModified = WithHeaders(Type.Null(), CACHE_HEADERS, 'Not modified: the If-None-Match ETag still matches');
const cacheHeaders = `Carries \`ETag\` and \`Cache-Control: ${CATALOG_CACHE_CONTROL}\`; a matching \`If-None-Match\` gets 304.`;

const publicPackRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'public', lowPriority: true },
      preParsing: app.answerFromCatalogCache,
      schema: {
        tags: ['Packs'],
        summary: '[spec] Active packs, newest first',
        description: `Public fields only; \`available\` is how many packs can still be sold. Paginated with \`limit\` (default 100, max 500) and the opaque \`cursor\` of the previous page's \`nextCursor\`. ${cacheHeaders}`,
        operationId: 'listPacks',
        querystring: PublicPackListQuery,
        response: { 200: WithHeaders(PublicPackList, CACHE_HEADERS, 'Active packs, newest first'), 304: NotModified },
      },
    },
    async (request, reply) => {
      const { limit = 100, cursor, teamId } = request.query;
      return app.sendCatalogResponse(request, reply, listKey({ limit, cursor, teamId }), () =>
        app.packs.listPublic({ limit, cursor, teamId }),
      );
    },
  );

  app.get(
    '/:id',
    {
      config: { auth: 'public', lowPriority: true },
      preParsing: app.answerFromCatalogCache,
      schema: {
        tags: ['Packs'],
        summary: 'An active pack with its live odds',
        description: `The per-draw probability of each pool entry is weight × remaining / Σ(weight × remaining). Drafts and archived packs are 404. ${cacheHeaders}`,
        operationId: 'getPack',
        params: PackParams,
        response: {
          200: WithHeaders(PublicPackDetail, CACHE_HEADERS, 'The pack and its live odds'),
          304: NotModified,
          ...errorResponses(404),
        },
      },
    },
    async (request, reply) =>
      app.sendCatalogResponse(request, reply, packKey(request.params.id), async () => ({
        success: true as const,
        data: await app.packs.getPublic(request.params.id),
      })),
  );
};

export default publicPackRoutes;
