import fp from 'fastify-plugin';
import type { EventConsumer } from '../events/service.js';
import { createQuestAdmin, type QuestAdmin } from './admin.js';
import { overdueQuests } from './repository.js';
import { applyEvents } from './progress.js';
import { createQuestsService, type QuestsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    quests: QuestsService & {
      admin: QuestAdmin;
      /** The consumer that moves progress from the event log (run in the background, or drained by tests). */
      consumer: EventConsumer;
      /** The job: ends up to `limit` active quests past their end; answers how many. */
      endOverdue(limit: number): Promise<number>;
    };
  }
}

/** Quests: progress from the event log only, claims through the grant engine, run by admins of their scope. */
export default fp(
  async (fastify) => {
    const db = fastify.db;
    const admin = createQuestAdmin({ db, audit: fastify.audit, teams: fastify.teams, rewards: fastify.rewards });
    const consumer = fastify.events.consumer({
      name: 'quests',
      handle: (tx, batch) => applyEvents(tx, batch, fastify.events),
    });
    fastify.decorate('quests', {
      ...createQuestsService({ db, rewards: fastify.rewards }),
      admin,
      consumer,
      async endOverdue(limit: number) {
        let ended = 0;
        for (const id of await overdueQuests(db.orm, limit)) if (await admin.endOverdue(id)) ended++;
        return ended;
      },
    });
  },
  { name: 'quests', dependencies: ['db', 'events', 'audit', 'teams', 'rewards'] },
);
