import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { authContext } from './context.js';
import { identityRoutes } from './identities.js';
import { mobileRoutes } from './mobile.js';
import { oauthRoutes } from './oauth.js';
import { sessionRoutes } from './sessions.js';

/**
 * The Auth group: mobile sign-in, refresh (OAuth 2.0), logout, RFC 7009 revocation, the session
 * list and linked provider accounts. With AUTH_SESSIONS off every route answers 404 `sessions_disabled`.
 */
const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const context = authContext(app);
  // In this order: the OpenAPI document lists the operations as they are registered.
  mobileRoutes(app, context);
  await oauthRoutes(app, context);
  sessionRoutes(app, context);
  identityRoutes(app, context);
};

export default authRoutes;
