import formBody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { OAuthError, UnauthorizedError } from '../../../plugins/app/errors.js';
import { hashRefreshToken } from '../../../plugins/app/sessions/rules.js';
import { OAuthErrorBody, RevokeRequestBody, TokenRequestBody, TokenResponse } from '../../../schemas/auth.js';
import { errorResponses } from '../../../schemas/common.js';
import { type AuthApp, type AuthContext, NO_STORE } from './context.js';

/** The OAuth 2.0 endpoints: refresh-token rotation (RFC 6749) and revocation (RFC 7009). */
export async function oauthRoutes(app: AuthApp, context: AuthContext): Promise<void> {
  // The OAuth endpoints take form-encoded bodies, as OAuth clients send them; nothing else here does.
  await app.register(async (scope) => {
    await scope.register(formBody, { bodyLimit: 16 * 1024 });
    const oauth = scope.withTypeProvider<TypeBoxTypeProvider>();

    oauth.post(
      '/token',
      {
        config: { auth: 'public', oauth: true },
        onRequest: context.limitByIp,
        // The grant type decides which other fields are valid, so an unknown one is named as such
        // before the body is validated against the refresh grant's fields (RFC 6749 §5.2).
        preValidation: (request, _reply, done) => {
          const grantType = (request.body as { grant_type?: unknown } | null | undefined)?.grant_type;
          done(
            typeof grantType === 'string' && grantType !== 'refresh_token'
              ? new OAuthError('unsupported_grant_type', 'Only grant_type=refresh_token is supported.')
              : undefined,
          );
        },
        schema: {
          tags: ['Auth'],
          summary: 'Exchange a refresh token for new tokens (rotation)',
          description:
            'OAuth 2.0 refresh (RFC 6749 §6), JSON or `application/x-www-form-urlencoded`. The refresh token is rotated: the answer carries its successor. ' +
            'The same token sent again within 30 s (a retry) gets the same successor; sent later, it revokes the whole session. ' +
            'Answers and errors are RFC 6749 bodies (`invalid_grant`, `invalid_request`, `unsupported_grant_type`), not the envelope.',
          operationId: 'refreshToken',
          consumes: ['application/json', 'application/x-www-form-urlencoded'],
          body: Type.Ref(TokenRequestBody),
          response: { 200: Type.Ref(TokenResponse), 400: Type.Ref(OAuthErrorBody), ...errorResponses(404) },
        },
      },
      async (request, reply) => {
        const sessions = context.sessionsOf();
        const { refresh_token: refreshToken } = request.body;
        if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required.');
        // Per session (a rotation issues a new token, so a per-token count would never add up).
        const session = await sessions.sessionOfRefreshToken(refreshToken);
        await context.perSubject(
          request,
          session ? `session:${session.sessionId}` : `refresh:${hashRefreshToken(refreshToken)}`,
        );
        const tokens = await sessions.refresh(refreshToken);
        reply.headers(NO_STORE);
        return {
          access_token: tokens.accessToken,
          token_type: 'Bearer' as const,
          expires_in: tokens.expiresIn,
          refresh_token: tokens.refreshToken,
        };
      },
    );

    oauth.post(
      '/revoke',
      {
        config: { auth: 'public', oauth: true },
        onRequest: context.limitByIp,
        schema: {
          tags: ['Auth'],
          summary: 'Revoke a refresh or access token (RFC 7009)',
          description:
            "A refresh token ends its session; an access token (ours or the identity provider's) is refused from now until it expires. " +
            'Answers 200 with no body for any token, known or not, valid or not (RFC 7009 §2.2).',
          operationId: 'revokeToken',
          consumes: ['application/json', 'application/x-www-form-urlencoded'],
          body: Type.Ref(RevokeRequestBody),
          response: {
            200: Type.Null({ description: 'Revoked, or nothing to revoke (empty body)' }),
            400: Type.Ref(OAuthErrorBody),
            ...errorResponses(404),
          },
        },
      },
      async (request, reply) => {
        const sessions = context.sessionsOf();
        const { token } = request.body;
        if (token.includes('.')) {
          // RFC 7009: an invalid token is not an error; an outage (503) is.
          const verified = await app.verifyToken(request, token).catch((error) => {
            if (error instanceof UnauthorizedError) return undefined;
            throw error;
          });
          if (verified) await sessions.revokeAccessToken(verified, token);
        } else {
          await sessions.revokeRefreshToken(token);
        }
        // RFC 7009 §2.2: the body is empty.
        return reply
          .headers(NO_STORE)
          .code(200)
          .send(undefined as unknown as null);
      },
    );
  });
}
