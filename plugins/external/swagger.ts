import fastifySwagger from '@fastify/swagger';
import fp from 'fastify-plugin';

/** The API's groups, in the order Swagger UI shows them; the document keeps those that have operations. */
export const API_TAGS = [
  { name: 'Auth', description: 'Mobile sign-in, refresh, logout and sessions' },
  { name: 'Admin', description: 'Catalog administration for platform and team admins' },
  { name: 'Teams', description: 'Teams and their members' },
  { name: 'Leagues', description: 'Leagues' },
  { name: 'Leaderboard', description: 'Scores and rankings' },
  { name: 'Locker room', description: "A fan's pulls and unopened packs" },
  { name: 'Packs', description: 'The public pack catalog, purchases and opening' },
  { name: 'User', description: 'The signed-in caller' },
  { name: 'Quests', description: 'Quests' },
  { name: 'Rewards', description: 'Rewards' },
  { name: 'Wallets', description: 'Coin balances and their ledger' },
  { name: 'Checkout', description: 'Buying coins: orders and Stripe Checkout' },
  { name: 'Dashboard', description: 'Dashboards' },
  { name: 'Products', description: 'Coin bundles and their prices' },
  { name: 'Cron', description: 'Scheduled jobs, callable by the scheduler' },
  {
    name: 'Webhooks',
    description:
      'Webhooks in (Stripe signs what it sends) and out (endpoints that receive the events of a team, or of the platform)',
  },
  { name: 'Misc', description: 'Health, readiness, the running version and the mobile app configuration' },
];

export interface SwaggerOptions {
  /** The last shaping of the generated document: what routes cannot say one by one (plugins/app/openapi.ts). */
  shapeDocument: (document: never) => unknown;
}

/** The OpenAPI 3.1 document, generated from the routes' TypeBox schemas. */
export default fp<SwaggerOptions>(
  async (fastify, { shapeDocument }) => {
    const { publicBaseUrl, devBaseUrl } = fastify.config;
    // The first server is relative, so Swagger UI calls the origin it was opened from. Every server
    // is for the public (x-internal: false).
    const servers = [
      {
        url: '/',
        description: 'This server: the origin this document was fetched from (local, staging or production)',
        'x-internal': false,
      },
      ...(publicBaseUrl ? [{ url: publicBaseUrl, description: 'Production', 'x-internal': false }] : []),
      { url: devBaseUrl, description: 'Local development', 'x-internal': false },
    ];
    await fastify.register(fastifySwagger, {
      // Shared schemas are components named by their $id (Pack, Error, ...), not def-0, def-1.
      transformObject: (generated) => shapeDocument((generated as { openapiObject: never }).openapiObject) as never,
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, index) =>
          typeof json.$id === 'string' ? json.$id : `def-${index}`,
      },
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Pack and Team Service',
          version: '0.1.0',
          description:
            'Teams curate packs of limited collectibles; fans buy and open them. ' +
            'Errors use one envelope, `{ success: false, error: { code, message, details? } }`; ' +
            'the codes are listed in docs/errors.md.',
          contact: { name: 'Pack and Team Service maintainers' },
          // Proprietary: no SPDX identifier exists for it, and Swagger UI would link one that did not.
          license: { name: 'Proprietary: all rights reserved' },
        },
        servers,
        tags: API_TAGS,
        components: {
          securitySchemes: {
            // The scheme people need first: Swagger UI's Authorize dialog lists them in this order.
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'JWT',
              description:
                'A JWT (RFC 7519): an access token of ours (`POST /api/auth/mobile/token`, `POST /api/auth/token`), or one from the identity provider. Verified as RFC8725 (JSON Web Token Best Current Practices) advises: the verifier chosen by `iss`, the algorithm pinned to its keys (`alg: none` and HMAC with a public key refused), `exp` and `sub` required, `iss` and `aud` checked; logged-out tokens refused. In development: `npm run token -- --sub alice [--admin]`.',
            },
            cronSecret: {
              type: 'http',
              scheme: 'bearer',
              description: 'The CRON_SECRET of the deployment, for an external scheduler calling the cron endpoints.',
            },
          },
        },
      },
    });
  },
  { name: 'swagger', dependencies: ['env'] },
);
