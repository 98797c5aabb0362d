import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import {
  CollectibleListQuery,
  CollectiblePage,
  CollectibleParams,
  CollectibleResponse,
  CreateCollectibleBody,
  UpdateCollectibleBody,
} from '../../../../schemas/collectibles.js';
import { errorResponses } from '../../../../schemas/common.js';

const adminCollectibleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: 'The collectibles catalog',
        description: 'Newest first; filter by `teamId` and `rarity`; paginated (`limit` default 50, max 200).',
        operationId: 'listCollectibles',
        querystring: CollectibleListQuery,
        response: { 200: CollectiblePage, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const page = await app.collectibles.list(callerOf(request), request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: 'Create a collectible',
        description: 'rarity defaults to common, points to 0. An unknown teamId is 404 `team_not_found`.',
        operationId: 'createCollectible',
        body: Type.Ref(CreateCollectibleBody),
        response: { 201: CollectibleResponse, ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      const collectible = await app.collectibles.create(callerOf(request), request.body);
      return reply.code(201).send({ success: true as const, data: collectible });
    },
  );

  app.get(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: 'A collectible',
        description: '`minted` counts the copies drawn so far.',
        operationId: 'getCollectible',
        params: CollectibleParams,
        response: { 200: CollectibleResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.collectibles.get(callerOf(request), request.params.id),
    }),
  );

  app.patch(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: 'Edit a collectible',
        description:
          'Changes show at once in the public odds of packs that hold it. The team of a collectible is fixed.',
        operationId: 'updateCollectible',
        params: CollectibleParams,
        body: Type.Ref(UpdateCollectibleBody),
        response: { 200: CollectibleResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.collectibles.update(callerOf(request), request.params.id, request.body),
    }),
  );
};

export default adminCollectibleRoutes;
