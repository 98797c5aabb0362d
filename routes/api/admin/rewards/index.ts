import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import {
  AdminGrantBody,
  CreateRewardBody,
  GrantOutcomesResponse,
  RewardListQuery,
  RewardPage,
  RewardParams,
  RewardResponse,
} from '../../../../schemas/rewards.js';

const adminRewardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Rewards'],
        summary: 'Rewards',
        description:
          'Newest first; filter by `teamId` (without it, platform admins only); paginated (`limit` default 50, max 200).',
        operationId: 'listRewards',
        querystring: RewardListQuery,
        response: { 200: RewardPage, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const page = await app.rewards.list(callerOf(request), request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Rewards'],
        summary: 'Create a reward',
        description:
          'A bundle of coins, packs and collectibles, of the platform (`teamId` null or absent) or of a team, fixed once created. ' +
          '400 `reward_empty` for a bundle that gives nothing; 404 `pack_not_found` / `collectible_not_found` for an unknown item; ' +
          "409 `reward_scope_mismatch` when a team's reward names another team's (or the platform's) pack or collectible.",
        operationId: 'createReward',
        body: Type.Ref(CreateRewardBody),
        response: { 201: RewardResponse, ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const reward = await app.rewards.create(callerOf(request), request.body);
      return reply.code(201).send({ success: true as const, data: reward });
    },
  );

  app.get(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Rewards'],
        summary: 'A reward',
        description:
          "Admins of the reward's scope: a team's reward for its members, a platform reward for platform admins.",
        operationId: 'getReward',
        params: RewardParams,
        response: { 200: RewardResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await app.rewards.get(callerOf(request), request.params.id) }),
  );

  app.post(
    '/:id/grants',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Rewards'],
        summary: 'Grant a reward to users',
        description:
          'Each user gets the reward once per `key` (source key `admin:{key}:{userId}`): a repeat answers the grants made before (`created` false) and creates only the missing ones, in one transaction. ' +
          'Packs are taken from the supply at once. 404 `user_not_found` when some user never signed in (nothing is written); ' +
          '409 `reward_stock_insufficient` when a pack cannot give them all, `reward_pack_unavailable` when it is not on sale.',
        operationId: 'grantReward',
        params: RewardParams,
        body: Type.Ref(AdminGrantBody),
        response: { 200: GrantOutcomesResponse, ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.rewards.adminGrant(callerOf(request), request.params.id, request.body),
    }),
  );
};

export default adminRewardRoutes;
