import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import {
  AdminPackListQuery,
  AdminPackPage,
  AdminPackResponse,
  CreatePackBody,
  PackActionBody,
  PackActionResponse,
  PackParams,
  UpdatePackBody,
} from '../../../../schemas/packs.js';

const adminPackRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: 'Packs of every status (admins of the scope)',
        description: 'Newest first; filter by `status` and `teamId`; paginated (`limit` default 50, max 200).',
        operationId: 'listAdminPacks',
        querystring: AdminPackListQuery,
        response: { 200: AdminPackPage, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const page = await app.packs.listAdmin(callerOf(request), request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: 'Create a pack (a draft)',
        description:
          'Defaults: price 0, cardsPerPack 5, supply null (no limit). An unknown teamId is 404 `team_not_found`.',
        operationId: 'createPack',
        body: Type.Ref(CreatePackBody),
        response: { 201: AdminPackResponse, ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      const pack = await app.packs.create(callerOf(request), request.body);
      return reply.code(201).send({ success: true as const, data: pack });
    },
  );

  app.get(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: 'A pack of any status, with its pool and odds',
        description: 'The pool is ordered by collectible id, the order draws walk.',
        operationId: 'getAdminPack',
        params: PackParams,
        response: { 200: AdminPackResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.packs.getAdmin(callerOf(request), request.params.id),
    }),
  );

  app.patch(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: 'Edit a pack',
        description:
          'name, description and imageUrl can change in any status; price, cardsPerPack and supply only in draft (else 409 `pack_not_draft`). The team of a pack is fixed.',
        operationId: 'updatePack',
        params: PackParams,
        body: Type.Ref(UpdatePackBody),
        response: { 200: AdminPackResponse, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.packs.update(callerOf(request), request.params.id, request.body),
    }),
  );

  app.post(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin'],
        summary: '[spec] Apply an action to a pack',
        description: [
          'Actions and the statuses they need:',
          '- `publish`: draft → active; the pool must hold at least `cardsPerPack` copies (else 409 `pool_cannot_fill_pack`).',
          '- `archive`: draft or active → archived.',
          '- `restore`: archived → draft (to be published again).',
          '- `addCollectible`: draft only; `collectibleId` required (the pack team’s or a global collectible); a new entry gets `quantity` (default 1) and `weight` (default 1); an existing entry has the given fields replaced and the others kept.',
          '- `removeCollectible`: draft only; `collectibleId` required; 404 `pool_entry_not_found` when it is not in the pool.',
          '',
          '`quantity` and `weight` are accepted only with `addCollectible`; `collectibleId` only with the two pool actions (400 naming the field).',
          'Any other combination of action and status is 409 `invalid_transition`, naming the current status.',
        ].join('\n'),
        operationId: 'applyPackAction',
        params: PackParams,
        body: Type.Ref(PackActionBody),
        response: { 200: PackActionResponse, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => {
      const pack = await app.packs.applyAction(callerOf(request), request.params.id, request.body);
      return { success: true as const, data: { success: true as const, pack } };
    },
  );
};

export default adminPackRoutes;
