import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { UserRow } from '../../../db/schema.js';
import { bearerTokenOf, type Caller, callerOf } from '../../../plugins/app/auth/index.js';
import { NotFoundError } from '../../../plugins/app/errors.js';
import { errorResponses } from '../../../schemas/common.js';
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
          "`isAdmin` is true for platform admins; `teams` lists the caller's team roles.",
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
      const updated = await app.users.updateDisplayName(caller.id, request.body.displayName);
      return { success: true as const, data: toCurrentUser(updated ?? caller.user, caller) };
    },
  );

  app.delete(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['User'],
        summary: 'Delete your account',
        description:
          'Every session ends at once (on every instance), linked provider accounts are unlinked, team roles removed and the profile anonymized. ' +
          'Coins, purchases and pulls stay, under the anonymized user, for the books. Nobody can sign in to this account again; ' +
          'the unlinked Apple or Google account may later sign up anew, as a new, empty user. ' +
          '409 `last_owner` while you are the last owner of a team.',
        operationId: 'deleteCurrentUser',
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      if (!app.sessions)
        throw new NotFoundError(
          'sessions_disabled',
          'Account deletion needs sessions, which are not enabled on this service.',
        );
      await app.sessions.deleteAccount(callerOf(request).token, bearerTokenOf(request));
      return reply.code(204).send(null);
    },
  );
};

export default userRoutes;
