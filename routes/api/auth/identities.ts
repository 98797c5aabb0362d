import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../plugins/app/auth/index.js';
import { IdentityListResponse, IdentityResponse, LinkIdentityBody } from '../../../schemas/auth.js';
import { errorResponses } from '../../../schemas/common.js';
import type { AuthApp, AuthContext } from './context.js';
import { toIdentity } from './mappers.js';

/** The provider accounts linked to the caller: the list, and linking another (verified as a sign-in). */
export function identityRoutes(app: AuthApp, context: AuthContext): void {
  app.get(
    '/identities',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Auth'],
        summary: 'The provider accounts linked to you',
        description: 'Each provider account that signs in as you, with the email it last reported (profile data only).',
        operationId: 'listIdentities',
        response: { 200: IdentityListResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: (await context.sessionsOf().identities(callerOf(request).id)).map(toIdentity),
    }),
  );

  app.post(
    '/identities',
    {
      config: { auth: 'user' },
      onRequest: context.limitByIp,
      schema: {
        tags: ['Auth'],
        summary: 'Link another provider account to you',
        description:
          'Verified like a sign-in (each ID token is used once). Afterwards either account signs in as you. ' +
          '400 `invalid_id_token` when the ID token does not verify; 409 `identity_in_use` when the account is linked to another user.',
        operationId: 'linkIdentity',
        body: Type.Ref(LinkIdentityBody),
        response: { 201: IdentityResponse, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const sessions = context.sessionsOf();
      const { provider, idToken, nonce } = request.body;
      const profile = await sessions.verifyIdToken(provider, idToken, nonce, 'link');
      await context.perSubject(request, `${provider}:${profile.subject}`);
      const identity = await sessions.link(callerOf(request).id, profile);
      return reply.code(201).send({ success: true as const, data: toIdentity(identity) });
    },
  );
}
