import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { errorResponses } from '../../schemas/common.js';
import { requireCronSecret } from './auth/cron.js';

/**
 * Default deny: every route declares who may call it, `config: { auth: 'public' | 'user' |
 * 'admin' | 'cron' }` (`cron`: the scheduler, with the CRON_SECRET bearer), and the app refuses to start with a route that does not. Registered before every
 * plugin that adds routes, so no route escapes it whatever the registration order; the guard it
 * adds looks up `authenticate` when a request arrives, so it does not depend on when the auth
 * plugin loads.
 *
 * The guard runs as a preParsing hook: after every onRequest hook (the rate limit counts a flood
 * of bad tokens first) and before the body is read or parsed.
 */

export const ACCESS_LEVELS = ['public', 'user', 'admin', 'cron'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: anyone, a signed-in user, a platform admin, or the scheduler. */
    auth?: AccessLevel;
  }
}

export default fp(
  async (fastify: FastifyInstance) => {
    /** Routes whose access a later onRoute hook may still declare (a third-party plugin's, made public by its wrapper). */
    const undeclared: RouteOptions[] = [];

    const guard = (level: 'user' | 'admin' | 'cron') =>
      async function requireCaller(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
        if (level === 'cron') requireCronSecret(request, fastify.config.cron.secret);
        else await (level === 'admin' ? fastify.requireAdmin(request, reply) : fastify.authenticate(request, reply));
        return payload;
      };

    fastify.addHook('onRoute', (route) => {
      const level = route.config?.auth;
      if (level === 'user' || level === 'admin') {
        route.preParsing = [...(route.preParsing ? [route.preParsing].flat() : []), guard(level)];
        route.schema = {
          ...route.schema,
          security: [{ bearerAuth: [] }],
          response: {
            ...errorResponses(...(level === 'admin' ? ([401, 403] as const) : ([401] as const))),
            ...(route.schema?.response as object | undefined),
          },
        };
      } else if (level === 'cron') {
        route.preParsing = [...(route.preParsing ? [route.preParsing].flat() : []), guard(level)];
        route.schema = {
          ...route.schema,
          security: [{ cronSecret: [] }],
          response: { ...errorResponses(401), ...(route.schema?.response as object | undefined) },
        };
      } else if (level !== 'public') {
        undeclared.push(route);
      }
    });

    fastify.addHook('onReady', async () => {
      for (const route of undeclared) {
        // Only `public` can be declared after the fact: a guard can no longer be added.
        if (route.config?.auth !== 'public') {
          throw new Error(
            `Route ${[route.method].flat().join(',')} ${route.url} does not declare its access: set config.auth to 'public', 'user' or 'admin'.`,
          );
        }
      }
      if (!fastify.hasDecorator('authenticate'))
        throw new Error('Routes need the auth plugin, which is not registered.');
    });
  },
  { name: 'access' },
);
