import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { NotFoundError } from '../../plugins/app/errors.js';
import { Jwks } from '../../schemas/auth.js';
import { errorResponses } from '../../schemas/common.js';

/** Public key discovery for the service's own access tokens. */
const wellKnownRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/jwks.json',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Auth'],
        summary: 'The public keys of our access tokens (JWKS)',
        description:
          'The current signing key and, after a rotation, the previous one: a token signed with either verifies until it expires. ' +
          'Match a token to its key by `kid`. Cacheable for 5 minutes (`Cache-Control: public, max-age=300`). 404 `sessions_disabled` when sessions are off.',
        operationId: 'getJwks',
        response: { 200: Type.Ref(Jwks), ...errorResponses(404) },
      },
    },
    async (_request, reply) => {
      const keys = app.sessionKeys;
      if (!keys) throw new NotFoundError('sessions_disabled', 'Sign-in and sessions are not enabled on this service.');
      reply.header('cache-control', 'public, max-age=300');
      return { keys: [keys.current.jwk, ...(keys.previous ? [keys.previous.jwk] : [])] };
    },
  );
};

export default wellKnownRoutes;
