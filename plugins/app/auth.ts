import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { UserRow } from '../../db/schema.js';
import { errorResponses } from '../../schemas/common.js';
import type { Principal } from './auth/policy.js';
import { displayNameFromClaims, isPlatformAdmin } from './auth/rules.js';
import { ForbiddenError } from './errors.js';

/**
 * Who is calling (DESIGN.md §5). A route opts in with `config: { auth: 'user' | 'admin' }`; this
 * plugin then runs the check right after the rate limit, before body parsing and validation,
 * and declares the bearer scheme
 * and the 401/403 responses in its schema, so the rule and its documentation cannot drift apart.
 * Team roles are loaded with the caller; what they allow is decided per resource by the
 * authorization matrix in auth/policy.ts.
 */

export type AuthRequirement = 'user' | 'admin';

export interface Caller extends Principal {
  displayName: string;
  user: UserRow;
  claims: Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRequirement;
  }
  interface FastifyRequest {
    /** Set by `authenticate`; routes with `config.auth` can rely on it. */
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
      const user = await fastify.users.provision(token.sub, displayNameFromClaims(token.sub, token.claims));
      request.caller = {
        id: user.id,
        displayName: user.displayName,
        isAdmin: isPlatformAdmin({ id: user.id, role: user.role, claims: token.claims }, fastify.config.auth),
        teamRoles: await fastify.users.teamRoles(user.id),
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

    const guards: Record<AuthRequirement, onRequestHookHandler> = { user: authenticate, admin: requireAdmin };

    fastify.addHook('onRoute', (route) => {
      const requirement = route.config?.auth;
      if (!requirement) return;
      const existing = route.onRequest ? [route.onRequest].flat() : [];
      // After the hooks already there (the rate limit's among them): a flood of bad tokens is
      // still counted and limited, and no user is provisioned for a request over the limit.
      route.onRequest = [...existing, guards[requirement]];
      route.schema = {
        ...route.schema,
        security: [{ bearerAuth: [] }],
        response: {
          ...errorResponses(...(requirement === 'admin' ? ([401, 403] as const) : ([401] as const))),
          ...(route.schema?.response as object | undefined),
        },
      };
    });
  },
  { name: 'auth', dependencies: ['env', 'users', 'jwt'] },
);
