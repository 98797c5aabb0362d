import formBody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { IdentityRow, SessionRow } from '../../../db/schema.js';
import { bearerTokenOf, callerOf } from '../../../plugins/app/auth/index.js';
import { NotFoundError, OAuthError, UnauthorizedError } from '../../../plugins/app/errors.js';
import { hashRefreshToken } from '../../../plugins/app/sessions/rules.js';
import type { SessionsService } from '../../../plugins/app/sessions/service.js';
import {
  IdentityListResponse,
  IdentityResponse,
  LinkIdentityBody,
  LogoutResponse,
  MobileSignInBody,
  OAuthErrorBody,
  RevokeRequestBody,
  SessionListResponse,
  SessionParams,
  SessionTokensResponse,
  TokenRequestBody,
  TokenResponse,
} from '../../../schemas/auth.js';
import { errorResponses } from '../../../schemas/common.js';

const MINUTE_MS = 60_000;
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

const toSession = (row: SessionRow, currentSid: string | undefined) => ({
  id: row.id,
  provider: row.provider,
  userAgent: row.userAgent,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt.toISOString(),
  expiresAt: row.expiresAt.toISOString(),
  current: row.id === currentSid,
});

const toIdentity = (row: IdentityRow) => ({
  provider: row.provider,
  email: row.email,
  emailVerified: row.emailVerified,
  createdAt: row.createdAt.toISOString(),
  lastSignInAt: row.lastSignInAt.toISOString(),
});

const userAgentOf = (request: FastifyRequest) => request.headers['user-agent']?.slice(0, 512) ?? null;

/**
 * The Auth group: mobile sign-in, refresh (OAuth 2.0), logout, RFC 7009 revocation, the session
 * list and linked provider accounts. With AUTH_SESSIONS off every route answers 404 `sessions_disabled`.
 */
const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const sessionsOf = (): SessionsService => {
    if (!app.sessions)
      throw new NotFoundError('sessions_disabled', 'Sign-in and sessions are not enabled on this service.');
    return app.sessions;
  };
  const limits = app.config.sessions?.rateLimit ?? { perIp: 60, perSubject: 30 };
  const perIp = app.keyedLimit({
    name: 'auth-ip',
    max: limits.perIp,
    windowMs: MINUTE_MS,
    what: 'sign-in attempts from this address',
  });
  const perSubject = app.keyedLimit({
    name: 'auth-subject',
    max: limits.perSubject,
    windowMs: MINUTE_MS,
    what: 'attempts for this account or session',
  });
  // Stricter limits than the global one, counted before the body is read.
  const limitByIp = async (request: FastifyRequest) => perIp(request, request.ip);

  app.post(
    '/mobile/token',
    {
      config: { auth: 'public' },
      onRequest: limitByIp,
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
      const sessions = sessionsOf();
      const { provider, idToken, nonce } = request.body;
      const profile = await sessions.verifyIdToken(provider, idToken, nonce, 'sign-in');
      await perSubject(request, `${provider}:${profile.subject}`);
      const tokens = await sessions.signIn({ profile, userAgent: userAgentOf(request) });
      reply.headers(NO_STORE);
      return { success: true as const, data: tokens };
    },
  );

  // The OAuth endpoints take form-encoded bodies, as OAuth clients send them; nothing else here does.
  await app.register(async (scope) => {
    await scope.register(formBody, { bodyLimit: 16 * 1024 });
    const oauth = scope.withTypeProvider<TypeBoxTypeProvider>();

    oauth.post(
      '/token',
      {
        config: { auth: 'public', oauth: true },
        onRequest: limitByIp,
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
        const sessions = sessionsOf();
        const { refresh_token: refreshToken } = request.body;
        if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required.');
        // Per session (a rotation issues a new token, so a per-token count would never add up).
        const session = await sessions.sessionOfRefreshToken(refreshToken);
        await perSubject(
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
        onRequest: limitByIp,
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
        const sessions = sessionsOf();
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
        data: { ended: await sessionsOf().logout(caller.token, bearerTokenOf(request)) },
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
        data: { ended: await sessionsOf().logoutAll(caller.token, bearerTokenOf(request)) },
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
      const rows = await sessionsOf().liveSessions(caller.id);
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
      await sessionsOf().endSession(callerOf(request).id, request.params.id);
      return reply.code(204).send(null);
    },
  );

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
      data: (await sessionsOf().identities(callerOf(request).id)).map(toIdentity),
    }),
  );

  app.post(
    '/identities',
    {
      config: { auth: 'user' },
      onRequest: limitByIp,
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
      const sessions = sessionsOf();
      const { provider, idToken, nonce } = request.body;
      const profile = await sessions.verifyIdToken(provider, idToken, nonce, 'link');
      await perSubject(request, `${provider}:${profile.subject}`);
      const identity = await sessions.link(callerOf(request).id, profile);
      return reply.code(201).send({ success: true as const, data: toIdentity(identity) });
    },
  );
};

export default authRoutes;
