import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { UserRow } from '../../../db/schema.js';
import type { VerifiedToken } from './tokens.js';
import type { Principal } from './policy.js';
import { displayNameFromClaims, isPlatformAdmin } from './rules.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';

/**
 * Who is calling: `authenticate` verifies the bearer token, provisions the user on
 * first sight and loads its team roles; `requireAdmin` also demands a platform admin. Routes ask
 * for them by declaring `config.auth` (plugins/app/access.ts). What team roles allow is decided
 * per resource by the authorization matrix in auth/policy.ts.
 */

export interface Caller extends Principal {
  displayName: string;
  user: UserRow;
  claims: Record<string, unknown>;
  /** The verified token: which issuer, and for our own tokens the session. */
  token: VerifiedToken;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `authenticate`; routes with `config.auth` user or admin can rely on it. */
    caller: Caller | null;
  }
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    requireAdmin: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

/** The verified bearer token's text (the Authorization header without its scheme). */
export function bearerTokenOf(request: FastifyRequest): string {
  return (request.headers.authorization ?? '').slice('Bearer '.length);
}

/** Routes with `config.auth` always have a caller; this states that contract in one place. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route declared config.auth but no caller was set');
  return request.caller;
}

export default fp(
  async (fastify) => {
    fastify.decorateRequest('caller', null);

    async function authenticate(request: FastifyRequest): Promise<void> {
      if (request.caller) return;
      const token = await fastify.verifyBearer(request);
      // A logged-out session or token: an in-memory lookup, kept in step across instances.
      if (fastify.sessions?.isRevoked(token, bearerTokenOf(request))) {
        request.log.debug({ sid: token.sid }, 'bearer token rejected: logged out');
        throw new UnauthorizedError('invalid_token', 'The token is not valid.');
      }
      const { user, teamRoles } = await fastify.users.provision(
        token.sub,
        displayNameFromClaims(token.sub, token.claims),
      );
      if (user.deletedAt) {
        request.log.debug('bearer token rejected: the account was deleted');
        throw new UnauthorizedError('invalid_token', 'The token is not valid.');
      }
      // Users made by mobile sign-in have ids of ours: an external provider naming one is not them.
      if (token.issuer === 'external' && user.origin === 'mobile') {
        request.log.debug('bearer token rejected: an external token names a user of mobile sign-in');
        throw new UnauthorizedError('invalid_token', 'The token is not valid.');
      }
      request.caller = {
        id: user.id,
        displayName: user.displayName,
        isAdmin: isPlatformAdmin({ id: user.id, role: user.role, claims: token.claims }, fastify.config.auth),
        teamRoles,
        user,
        claims: token.claims,
        token,
      };
    }

    async function requireAdmin(request: FastifyRequest): Promise<void> {
      await authenticate(request);
      if (!request.caller?.isAdmin) throw new ForbiddenError('This endpoint is for platform admins.');
    }

    fastify.decorate('authenticate', authenticate);
    fastify.decorate('requireAdmin', requireAdmin);
  },
  { name: 'auth', dependencies: ['env', 'users', 'jwt', 'sessions'] },
);
