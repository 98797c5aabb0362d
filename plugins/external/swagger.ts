import fastifySwagger from '@fastify/swagger';
import fp from 'fastify-plugin';

/** Every group the service has or will have (DESIGN.md §7), so the document's outline is stable. */
export const API_TAGS = [
  { name: 'Auth', description: 'Tokens and sessions' },
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
  { name: 'Checkout', description: 'Checkout' },
  { name: 'Dashboard', description: 'Dashboards' },
  { name: 'Products', description: 'Products' },
  { name: 'Cron', description: 'Scheduled jobs, callable by the scheduler' },
  { name: 'Webhooks', description: 'Incoming webhooks' },
  { name: 'Misc', description: 'Health and readiness' },
];

/** The OpenAPI 3.1 document, generated from the routes' TypeBox schemas. */
export default fp(async (fastify) => {
  const { publicBaseUrl, devBaseUrl } = fastify.config;
  await fastify.register(fastifySwagger, {
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
        license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
      },
      servers: [
        ...(publicBaseUrl ? [{ url: publicBaseUrl, description: 'Production' }] : []),
        { url: devBaseUrl, description: 'Development' },
      ],
      tags: API_TAGS,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'A JWT from the identity provider; in development, `npm run token -- --sub alice [--admin]`.',
          },
        },
      },
    },
  });
}, { name: 'swagger', dependencies: ['env'] });
