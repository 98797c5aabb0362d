import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { NotFoundError } from '../../../plugins/app/errors.js';
import type { SessionsService } from '../../../plugins/app/sessions/service.js';

/** What the Auth group's route files share: the sessions service, its limits and reply headers. */

export type AuthApp = Parameters<FastifyPluginAsyncTypebox>[0];

export interface AuthContext {
  /** The sessions service; 404 `sessions_disabled` when AUTH_SESSIONS is off. */
  sessionsOf(): SessionsService;
  /** The per-address limit of the sign-in, token, revoke and link endpoints (an onRequest hook). */
  limitByIp(request: FastifyRequest): Promise<void>;
  /** The per-subject limit: a provider account, a session or a refresh token. */
  perSubject(request: FastifyRequest, key: string): Promise<void>;
}

const MINUTE_MS = 60_000;
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

export const userAgentOf = (request: FastifyRequest) => request.headers['user-agent']?.slice(0, 512) ?? null;

/** One set of limits for the whole group: every route counts in the same buckets. */
export function authContext(app: AuthApp): AuthContext {
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
  return {
    sessionsOf: () => {
      if (!app.sessions)
        throw new NotFoundError('sessions_disabled', 'Sign-in and sessions are not enabled on this service.');
      return app.sessions;
    },
    // Stricter limits than the global one, counted before the body is read.
    limitByIp: async (request) => perIp(request, request.ip),
    perSubject,
  };
}
