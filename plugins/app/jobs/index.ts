import fp from 'fastify-plugin';
import { deleteExpiredResponses } from '../idempotency/repository.js';
import { IDEMPOTENCY_RETENTION_MS } from '../idempotency/index.js';
import { expirePurchases } from '../purchases/repository.js';

/** Rows one run touches per batch: a run never holds many locks or runs one long statement. */
const BATCH = 500;
/** Batches per run: a backlog larger than this is finished by the next run. */
const MAX_BATCHES = 20;
const INTERVAL_MS = 60_000;

export interface Jobs {
  /**
   * Marks pending purchases past their expiry as expired (their packs already counted as free)
   * and forgets idempotency responses past their retention. Safe when several instances run it at
   * once: rows another run holds are skipped.
   */
  expirePurchases(): Promise<{ expired: number }>;
}

declare module 'fastify' {
  interface FastifyInstance {
    jobs: Jobs;
  }
}

/** Scheduled jobs, run every minute in-process (unless CRON_INTERNAL=false) and by POST /api/cron/*. */
export default fp(
  async (fastify) => {
    const jobs: Jobs = {
      async expirePurchases() {
        let expired = 0;
        for (let batch = 0; batch < MAX_BATCHES; batch++) {
          const count = await expirePurchases(fastify.db.orm, BATCH);
          expired += count;
          if (count < BATCH) break;
        }
        for (let batch = 0; batch < MAX_BATCHES; batch++) {
          if ((await deleteExpiredResponses(fastify.db.orm, new Date(Date.now() - IDEMPOTENCY_RETENTION_MS), BATCH)) < BATCH) break;
        }
        return { expired };
      },
    };
    fastify.decorate('jobs', jobs);

    if (fastify.config.cron.internal) {
      let running: Promise<unknown> | undefined;
      const timer = setInterval(() => {
        if (running) return;
        running = jobs
          .expirePurchases()
          .then(({ expired }) => expired > 0 && fastify.log.info({ expired }, 'expired purchases'))
          .catch((error) => fastify.log.warn({ err: error }, 'the purchase expiry job failed; the next run retries'))
          .finally(() => {
            running = undefined;
          });
      }, INTERVAL_MS);
      timer.unref();
      fastify.addHook('preClose', async () => {
        clearInterval(timer);
        await running;
      });
    }
  },
  { name: 'jobs', dependencies: ['db'] },
);
