import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { UserRow } from '../../db/schema.js';
import type { Principal } from './auth/policy.js';
import { displayNameFromClaims, isPlatformAdmin } from './auth/rules.js';
import { ForbiddenError } from './errors.js';

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
      const { user, teamRoles } = await fastify.users.provision(token.sub, displayNameFromClaims(token.sub, token.claims));
      request.caller = {
        id: user.id,
        displayName: user.displayName,
        isAdmin: isPlatformAdmin({ id: user.id, role: user.role, claims: token.claims }, fastify.config.auth),
        teamRoles,
        user,
        claims: token.claims,
      };
    }

    async function requireAdmin(request: FastifyRequest): Promise<void> {
      await authenticate(request);
      if (!request.caller?.isAdmin) throw new ForbiddenError('This endpoint is for platform admins.');
    }

    fastify.decorate('authenticate', authenticate);
    fastify.decorate('requireAdmin', requireAdmin);
  },
  { name: 'auth', dependencies: ['env', 'users', 'jwt'] },
);
