import { Type } from '@sinclair/typebox';
import { MobileSignInBody, SessionTokensResponse } from '../../../schemas/auth.js';
import { errorResponses } from '../../../schemas/common.js';
import { type AuthApp, type AuthContext, NO_STORE, userAgentOf } from './context.js';

/** Mobile sign-in: an Apple or Google ID token in, a session of ours out. */
export function mobileRoutes(app: AuthApp, context: AuthContext): void {
  app.post(
    '/mobile/token',
    {
      config: { auth: 'public' },
      onRequest: context.limitByIp,
      schema: {
        tags: ['Auth'],
        summary: 'Sign in with an Apple or Google ID token',
        description:
          'Verifies the ID token (signature through the provider keys, issuer, audience = one of our client ids, expiry, nonce), ' +
          'finds the user linked to the provider account (creating one on first sign-in), opens a session and answers its tokens. ' +
          'Each ID token signs in once: a replay is refused. Every refusal is the same 401 `invalid_token`. Limited per address and per provider account.',
        operationId: 'signInMobile',
        body: Type.Ref(MobileSignInBody),
        response: { 200: SessionTokensResponse, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      const sessions = context.sessionsOf();
      const { provider, idToken, nonce } = request.body;
      const profile = await sessions.verifyIdToken(provider, idToken, nonce, 'sign-in');
      await context.perSubject(request, `${provider}:${profile.subject}`);
      const tokens = await sessions.signIn({ profile, userAgent: userAgentOf(request) });
      reply.headers(NO_STORE);
      return { success: true as const, data: tokens };
    },
  );
}
