import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { jobLeases, jobRuns } from '../../../db/schema.js';
import type { CRON_JOBS } from '../../../schemas/enums.js';
import type { Database } from '../database/index.js';

/** SQL of job leases and job runs. */

export type JobName = (typeof CRON_JOBS)[number];

/**
 * Takes the job's lease for a new run, unless a live run holds it: one conditional upsert decides
 * between instances. Answers the run's id, or undefined when the job is running elsewhere.
 */
export async function takeLease(db: Database, job: JobName, leaseMs: number): Promise<string | undefined> {
  const runId = randomUUID();
  const expiresAt = sql`clock_timestamp() + ${`${leaseMs} milliseconds`}::interval`;
  const [taken] = await db
    .insert(jobLeases)
    .values({ job, runId, expiresAt })
    .onConflictDoUpdate({
      target: jobLeases.job,
      set: { runId, expiresAt },
      setWhere: sql`${jobLeases.expiresAt} < clock_timestamp()`,
    })
    .returning({ runId: jobLeases.runId });
  return taken?.runId === runId ? runId : undefined;
}

export async function releaseLease(db: Database, job: JobName, runId: string): Promise<void> {
  await db.delete(jobLeases).where(and(eq(jobLeases.job, job), eq(jobLeases.runId, runId)));
}

export async function recordStart(
  db: Database,
  runId: string,
  job: JobName,
  trigger: 'schedule' | 'request',
): Promise<void> {
  await db.insert(jobRuns).values({ id: runId, job, trigger });
}

export async function recordEnd(
  db: Database,
  runId: string,
  result: { processed: number } | { error: string },
): Promise<void> {
  await db
    .update(jobRuns)
    .set({
      finishedAt: sql`now()`,
      ...('error' in result
        ? { outcome: 'failed' as const, error: result.error.slice(0, 500) }
        : { outcome: 'ok' as const, processed: result.processed }),
    })
    .where(eq(jobRuns.id, runId));
}
