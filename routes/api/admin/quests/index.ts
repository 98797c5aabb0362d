import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import {
  CreateQuestBody,
  QuestActionBody,
  AdminQuestListQuery,
  QuestPage,
  QuestParams,
  QuestResponse,
  UpdateQuestBody,
} from '../../../../schemas/quests.js';

const adminQuestRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Quests'],
        summary: 'Quests of a scope',
        description: 'Newest first; filter by `teamId` and `status`; paginated.',
        operationId: 'listAdminQuests',
        querystring: AdminQuestListQuery,
        response: { 200: QuestPage, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const page = await app.quests.admin.list(callerOf(request), request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Quests'],
        summary: 'Create a quest (draft)',
        description:
          'A draft: nothing counts until it is published. The reward must belong to the quest’s scope (404 `reward_not_found`); `timeZone` is an IANA zone (default UTC), frozen at publication.',
        operationId: 'createQuest',
        body: Type.Ref(CreateQuestBody),
        response: { 201: QuestResponse, ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      const quest = await app.quests.admin.create(callerOf(request), request.body);
      return reply.code(201).send({ success: true as const, data: quest });
    },
  );

  app.get(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Quests'],
        summary: 'A quest, in any status',
        description: 'Drafts included; `completions` counts the claims made so far.',
        operationId: 'getAdminQuest',
        params: QuestParams,
        response: { 200: QuestResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.quests.admin.get(callerOf(request), request.params.id),
    }),
  );

  app.patch(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Quests'],
        summary: 'Edit a quest',
        description:
          'A draft: anything. Active: `name`, `description` and `endsAt` only; criteria, period, zone, reward and limits never change once active (409 `quest_immutable`: make a new quest). Ended: nothing.',
        operationId: 'updateQuest',
        params: QuestParams,
        body: Type.Ref(UpdateQuestBody),
        response: { 200: QuestResponse, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.quests.admin.update(callerOf(request), request.params.id, request.body),
    }),
  );

  app.post(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Quests'],
        summary: 'Publish or end a quest',
        description:
          '`publish` (draft → active) reserves the reward’s packs and collectibles for `maxCompletions` claims, or is refused (409 `reward_stock_insufficient`; 400 `max_completions_required` for a reward with inventory and no limit). `end` (active → ended) releases what was reserved and not given.',
        operationId: 'questAction',
        params: QuestParams,
        body: Type.Ref(QuestActionBody),
        response: { 200: QuestResponse, ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.quests.admin.act(callerOf(request), request.params.id, request.body),
    }),
  );
};

export default adminQuestRoutes;
