import { Type } from '@sinclair/typebox';
import { bearerTokenOf, callerOf } from '../../../plugins/app/auth/index.js';
import { LogoutResponse, SessionListResponse, SessionParams } from '../../../schemas/auth.js';
import { errorResponses } from '../../../schemas/common.js';
import type { AuthApp, AuthContext } from './context.js';
import { toSession } from './mappers.js';

/** The caller's sessions: logout here or everywhere, the list of live sessions, ending one. */
export function sessionRoutes(app: AuthApp, context: AuthContext): void {
  app.post(
    '/logout',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Auth'],
        summary: 'Log out: end this session (or this external token)',
        description:
          'With a token of ours, its session ends: its refresh token stops working and its access tokens are refused at once on every instance. ' +
          "With an identity provider's token, that token is refused until it expires.",
        operationId: 'logout',
        response: { 200: LogoutResponse, ...errorResponses(404) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return {
        success: true as const,
        data: { ended: await context.sessionsOf().logout(caller.token, bearerTokenOf(request)) },
      };
    },
  );

  app.post(
    '/logout-all',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Auth'],
        summary: 'Log out everywhere: end every session of yours',
        description:
          "Every session of the caller ends at once, on every instance. Called with an identity provider's token, that token is refused too.",
        operationId: 'logoutAll',
        response: { 200: LogoutResponse, ...errorResponses(404) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return {
        success: true as const,
        data: { ended: await context.sessionsOf().logoutAll(caller.token, bearerTokenOf(request)) },
      };
    },
  );

  app.get(
    '/sessions',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Auth'],
        summary: 'Your live sessions, most recently used first',
        description:
          'Sessions neither ended nor expired (up to 200). `current` marks the session of the token making the call.',
        operationId: 'listSessions',
        response: { 200: SessionListResponse, ...errorResponses(404) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const rows = await context.sessionsOf().liveSessions(caller.id);
      return { success: true as const, data: rows.map((row) => toSession(row, caller.token.sid)) };
    },
  );

  app.delete(
    '/sessions/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Auth'],
        summary: 'End one of your sessions (a lost phone)',
        description:
          'Its refresh token stops working and its access tokens are refused at once. 404 `session_not_found` for a session that is not yours, already ended, or expired.',
        operationId: 'endSession',
        params: SessionParams,
        response: { 204: Type.Null({ description: 'Ended' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await context.sessionsOf().endSession(callerOf(request).id, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
