import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callerOf } from '../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../schemas/common.js';
import {
  ClaimQuestBody,
  PublicQuestPage,
  PublicQuestResponse,
  QuestClaimResponse,
  QuestParams,
  QuestListQuery,
} from '../../../schemas/quests.js';

const questRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /** Public routes answer the caller's progress too when a token comes with the request (a bad one is 401). */
  const optionalCaller = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.headers.authorization === undefined) return undefined;
    await app.authenticate(request, reply);
    return request.caller?.id;
  };

  app.get(
    '/',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Quests'],
        summary: 'Active quests',
        description:
          'Newest first; filter by `teamId`; paginated. With a bearer token each quest carries the caller’s progress in its current period (computed in the quest’s time zone); without one, `progress` is null.',
        operationId: 'listQuests',
        querystring: QuestListQuery,
        response: { 200: PublicQuestPage, ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      const page = await app.quests.list(request.query, await optionalCaller(request, reply));
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/:id',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Quests'],
        summary: 'A quest',
        description: 'An active or ended quest, with the caller’s progress when a bearer token comes with the request.',
        operationId: 'getQuest',
        params: QuestParams,
        response: { 200: PublicQuestResponse, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => ({
      success: true as const,
      data: await app.quests.get(request.params.id, await optionalCaller(request, reply)),
    }),
  );

  app.post(
    '/:id/claim',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Quests'],
        summary: 'Claim a quest’s reward',
        description:
          'Grants the reward of a completed period once: 201 when this call granted it, 200 with the same grant when it was already claimed. Without `period`, the latest completed period not yet claimed, else the current one. 409 `quest_not_completed`, `quest_not_active` (ended), `quest_exhausted` (every completion given).',
        operationId: 'claimQuest',
        params: QuestParams,
        body: Type.Ref(ClaimQuestBody),
        response: { 200: QuestClaimResponse, 201: QuestClaimResponse, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const claim = await app.quests.claim(callerOf(request).id, request.params.id, request.body ?? {});
      return reply.code(claim.created ? 201 : 200).send({ success: true as const, data: claim });
    },
  );
};

export default questRoutes;
