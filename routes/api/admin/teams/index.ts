import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import {
  AddMemberBody,
  CreateTeamBody,
  MemberListQuery,
  MemberParams,
  TeamAdminPage,
  TeamAdminResponse,
  TeamParams,
  TeamResponse,
  UpdateMemberBody,
} from '../../../../schemas/teams.js';

const adminTeamRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Teams'],
        summary: 'Create a team (platform admins)',
        description:
          'The slug defaults to one made from the name (409 `slug_taken` when another team has it). The first owner is `ownerUserId`, by default the caller; an owner who never signed in is 404 `user_not_found`.',
        operationId: 'createTeam',
        body: Type.Ref(CreateTeamBody),
        response: { 201: TeamResponse, ...errorResponses(403, 404, 409) },
      },
    },
    async (request, reply) => {
      const team = await app.teams.create(callerOf(request), request.body);
      return reply.code(201).send({ success: true as const, data: team });
    },
  );

  app.get(
    '/:teamId/members',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Teams'],
        summary: "The team's members and their roles",
        description:
          'For the team’s members (any role) and platform admins. Newest first; filter by `role`; paginated.',
        operationId: 'listTeamMembers',
        params: TeamParams,
        querystring: MemberListQuery,
        response: { 200: TeamAdminPage, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const page = await app.teams.listMembers(callerOf(request), request.params.teamId, request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/:teamId/members',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Teams'],
        summary: '[spec] Add a member to a team',
        description: [
          'For the team’s owners and platform admins. `role` is owner, editor or viewer (default editor).',
          '- 201 with the new TeamAdmin when the user is added;',
          '- 200 with the same body when the user already has that role (repeating the call is safe);',
          '- 409 `already_member` when the user has another role (change it with PATCH);',
          '- 404 `user_not_found` for a user who has never signed in; 404 `team_not_found` for an unknown team.',
        ].join('\n'),
        operationId: 'addTeamMember',
        params: TeamParams,
        body: Type.Ref(AddMemberBody),
        response: { 200: TeamAdminResponse, 201: TeamAdminResponse, ...errorResponses(403, 404, 409) },
      },
    },
    async (request, reply) => {
      const { created, member } = await app.teams.addMember(callerOf(request), request.params.teamId, request.body);
      return reply.code(created ? 201 : 200).send({ success: true as const, data: member });
    },
  );

  app.patch(
    '/:teamId/members/:userId',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Teams'],
        summary: "Change a member's role",
        description: 'For the team’s owners and platform admins. Demoting the last owner is 409 `last_owner`.',
        operationId: 'updateTeamMember',
        params: MemberParams,
        body: Type.Ref(UpdateMemberBody),
        response: { 200: TeamAdminResponse, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.teams.updateMember(callerOf(request), request.params.teamId, request.params.userId, request.body),
    }),
  );

  app.delete(
    '/:teamId/members/:userId',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Teams'],
        summary: 'Remove a member from a team',
        description:
          'For the team’s owners and platform admins. Answers the removed membership. Removing the last owner is 409 `last_owner`.',
        operationId: 'removeTeamMember',
        params: MemberParams,
        response: { 200: TeamAdminResponse, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.teams.removeMember(callerOf(request), request.params.teamId, request.params.userId),
    }),
  );
};

export default adminTeamRoutes;
