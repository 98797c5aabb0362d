import fp from 'fastify-plugin';
import { holdDemoLock } from './repository.js';
import { loadDemoCatalog } from './seed.js';

/** DEMO_DATA: the demo catalog, loaded into an empty database at start (see seed.ts). */
export default fp(
  async (fastify) => {
    if (!fastify.config.demoData) return;
    const loaded = await fastify.db.transaction(async (tx) => {
      await holdDemoLock(tx);
      return loadDemoCatalog({
        users: fastify.users,
        teams: fastify.teams,
        collectibles: fastify.collectibles,
        packs: fastify.packs,
      });
    });
    if (loaded) fastify.log.info('DEMO_DATA: loaded the demo catalog into the empty database');
  },
  { name: 'demo', dependencies: ['db', 'env', 'users', 'teams', 'collectibles', 'packs'] },
);
