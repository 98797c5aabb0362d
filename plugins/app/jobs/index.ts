import fp from 'fastify-plugin';
import type { CRON_JOBS } from '../../../schemas/enums.js';
import { jobRunning } from './errors.js';
import { type JobName, recordEnd, recordStart, releaseLease, takeLease } from './repository.js';

/** Rows one run touches per batch: a run never holds many locks or runs one long statement. */
const BATCH = 500;
/** Batches per run: a backlog larger than this is finished by the next run. */
const MAX_BATCHES = 20;
const INTERVAL_MS = 60_000;
/** Orders one run settles with Stripe (a call or two each). */
const ORDER_BATCH = 100;
/** Rounds one run finalizes, and rounds whose prizes it resumes (each a transaction or more). */
const ROUND_BATCH = 20;
/** A run holds its job's lease this long at most: a holder that died frees the job by then. */
const LEASE_MS = 5 * 60_000;

export interface JobResult {
  job: JobName;
  /** What the run did: the purchases expired, or the orders settled. */
  processed: number;
  /** `expire-purchases`: the purchases marked expired (the same as `processed`). */
  expired?: number;
}

export interface Jobs {
  /**
   * Runs a job now, unless a run of it is under way on any instance (409 `job_running`). Every
   * run is recorded in `job_runs` with its outcome; a failed run answers its error.
   */
  run(job: JobName, trigger: 'schedule' | 'request'): Promise<JobResult>;
}

declare module 'fastify' {
  interface FastifyInstance {
    jobs: Jobs;
  }
}

type JobWork = () => Promise<Omit<JobResult, 'job'>>;

/** Runs `step` on batches of BATCH rows until one comes back short, MAX_BATCHES at most; answers the rows done. */
async function inBatches(step: (limit: number) => Promise<number>): Promise<number> {
  let done = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const count = await step(BATCH);
    done += count;
    if (count < BATCH) break;
  }
  return done;
}

/** Scheduled jobs, run every minute in-process (unless CRON_INTERNAL=false) and by POST /api/cron/{job}. */
export default fp(
  async (fastify) => {
    const db = fastify.db.orm;
    const work: Record<(typeof CRON_JOBS)[number], JobWork> = {
      /**
       * Marks pending purchases past their expiry as expired (their packs already counted as free)
       * and forgets idempotency responses past their retention, in bounded batches.
       */
      'expire-purchases': async () => {
        const expired = await inBatches((limit) => fastify.purchases.expireOverdue(limit));
        await inBatches((limit) => fastify.idempotency.forgetExpired(limit));
        return { processed: expired, expired };
      },
      // Orders are settled one Stripe call at a time: a run takes a bounded batch.
      'expire-orders': async () => ({ processed: await fastify.checkout.expireOrders(ORDER_BATCH) }),
      'reconcile-orders': async () => ({ processed: await fastify.checkout.reconcileOrders(ORDER_BATCH) }),
      // A quest past its end stops counting at once; ending it releases the reward stock it promised.
      'end-quests': async () => ({ processed: await fastify.quests.endOverdue(BATCH) }),
      // Statuses follow the clock; rounds past finalizesAt are finalized, unpaid prizes resumed.
      'advance-rounds': async () => ({ processed: await fastify.leagues.finalizer.advance(ROUND_BATCH) }),
      // A window that closed is ranked once and frozen, after the consumer has counted what it held.
      'freeze-leaderboards': async () => {
        await fastify.leaderboards.consumer.drain();
        return { processed: await fastify.leaderboards.freezeClosed() };
      },
      // Ended deliveries are kept 30 days; a large backlog goes a bounded batch at a time.
      'prune-webhook-deliveries': async () => ({
        processed: await inBatches((limit) => fastify.webhooks.prune(limit)),
      }),
      // One Google call each: a bounded batch a run, well inside Google's three days.
      'retry-google-consumes': async () => ({ processed: await fastify.googlePlay.retryConsumes(ORDER_BATCH) }),
      // Voided purchases since the last run (with an hour's overlap), at most every 15 minutes.
      'reconcile-google-voided': async () => ({ processed: await fastify.googlePlay.reconcileVoided() }),
      // App Store notifications the webhook missed, read back from Apple's history (bounded pages).
      'recover-apple-notifications': async () => ({ processed: await fastify.appStore.recoverNotifications() }),
    };

    const jobs: Jobs = {
      async run(job, trigger) {
        const runId = await takeLease(db, job, LEASE_MS);
        if (!runId) throw jobRunning(job);
        try {
          await recordStart(db, runId, job, trigger);
          try {
            const result = await work[job]();
            await recordEnd(db, runId, result);
            return { job, ...result };
          } catch (error) {
            await recordEnd(db, runId, { error: (error as Error).message ?? String(error) }).catch(() => {});
            throw error;
          }
        } finally {
          await releaseLease(db, job, runId).catch((error) =>
            fastify.log.warn({ err: error, job }, 'could not release a job lease; it expires by itself'),
          );
        }
      },
    };
    fastify.decorate('jobs', jobs);

    if (fastify.config.cron.internal) {
      let running: Promise<unknown> | undefined;
      const timer = setInterval(() => {
        if (running) return;
        running = Promise.all(
          (Object.keys(work) as JobName[]).map((job) =>
            jobs
              .run(job, 'schedule')
              .then(({ processed }) => processed > 0 && fastify.log.info({ job, processed }, 'job run'))
              .catch((error) => {
                // Another instance running it is the lease doing its work, not a failure.
                if ((error as { code?: string }).code !== 'job_running')
                  fastify.log.warn({ err: error, job }, 'a job run failed; the next run retries');
              }),
          ),
        ).finally(() => {
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
  {
    name: 'jobs',
    dependencies: [
      'db',
      'env',
      'checkout',
      'purchases',
      'idempotency',
      'quests',
      'leagues',
      'leaderboards',
      'webhooks',
      'google-play',
      'app-store',
    ],
  },
);
