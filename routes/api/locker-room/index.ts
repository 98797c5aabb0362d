import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../schemas/common.js';
import {
  LockerRoomTotalsResponse,
  OpenResultResponse,
  PullPage,
  PullQuery,
  UserPackParams,
} from '../../../schemas/purchases.js';

const lockerRoomRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Locker room'],
        summary: 'Your totals',
        description:
          'Copies owned in all and per rarity, your score (the points of every copy pulled), and your unopened packs.',
        operationId: 'getLockerRoom',
        response: { 200: LockerRoomTotalsResponse },
      },
    },
    async (request) => ({ success: true as const, data: await app.lockerRoom.totals(callerOf(request).id) }),
  );

  app.get(
    '/collectibles',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Locker room'],
        summary: 'Your pulls, newest first',
        description:
          'Each copy with its collectible and serial number (`#serialNumber / editionSize`). Filter by `rarity` and `teamId`; paginated (`limit` default 50, max 200).',
        operationId: 'listLockerRoomCollectibles',
        querystring: PullQuery,
        response: { 200: PullPage },
      },
    },
    async (request) => {
      const page = await app.lockerRoom.pulls(callerOf(request).id, request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/opens/:userPackId',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Locker room'],
        summary: 'One of your opens, with its fairness proof',
        description:
          'The stored result of opening the pack, exactly as answered then. 404 `open_not_found` for a pack that is not yours or not opened.',
        operationId: 'getOpen',
        params: UserPackParams,
        response: { 200: OpenResultResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.opening.openResult(app.db.orm, callerOf(request).id, request.params.userPackId),
    }),
  );
};

export default lockerRoomRoutes;
