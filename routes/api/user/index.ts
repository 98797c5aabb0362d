import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { UserRow } from '../../../db/schema.js';
import { type Caller, callerOf } from '../../../plugins/app/auth.js';
import { CurrentUserResponse, type CurrentUser, UpdateCurrentUserBody } from '../../../schemas/user.js';

function toCurrentUser(user: UserRow, caller: Caller): CurrentUser {
  return {
    id: user.id,
    displayName: user.displayName,
    isAdmin: caller.isAdmin,
    teams: [...caller.teamRoles].map(([teamId, role]) => ({ teamId, role })),
    createdAt: user.createdAt.toISOString(),
  };
}

const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['User'],
        summary: 'The signed-in caller, provisioned on first call',
        description:
          'The first verified token of a subject creates its user (just-in-time provisioning). ' +
          '`isAdmin` is true for platform admins; `teams` lists the caller\'s team roles.',
        operationId: 'getCurrentUser',
        response: { 200: CurrentUserResponse },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return { success: true as const, data: toCurrentUser(caller.user, caller) };
    },
  );

  app.patch(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['User'],
        summary: "Change the caller's display name",
        description: 'The chosen name is kept: later tokens carrying another `name` claim do not overwrite it.',
        operationId: 'updateCurrentUser',
        body: Type.Ref(UpdateCurrentUserBody),
        response: { 200: CurrentUserResponse },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const updated = await app.users.updateDisplayName(caller.id, request.body.displayName.trim());
      return { success: true as const, data: toCurrentUser(updated ?? caller.user, caller) };
    },
  );
};

export default userRoutes;
