import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { CRON_JOBS, JOB_OUTCOMES, sqlValues } from '../../schemas/enums.js';
import { ts } from './timestamps.js';

/**
 * Who runs a job now: one run of a job at a time across every instance. A lease, not a lock held
 * by a connection: a run spans many short transactions, and a holder that died frees it when the
 * lease expires.
 */
export const jobLeases = pgTable('job_leases', {
  job: text('job', { enum: CRON_JOBS }).primaryKey(),
  runId: text('run_id').notNull(),
  expiresAt: ts('expires_at').notNull(),
});

/** Every run of a job: when, what it did, and how it ended. */
export const jobRuns = pgTable(
  'job_runs',
  {
    id: text('id').primaryKey(),
    job: text('job', { enum: CRON_JOBS }).notNull(),
    trigger: text('trigger', { enum: ['schedule', 'request'] }).notNull(),
    startedAt: ts('started_at').notNull().defaultNow(),
    finishedAt: ts('finished_at'),
    processed: integer('processed'),
    outcome: text('outcome', { enum: JOB_OUTCOMES }),
    error: text('error'),
  },
  (table) => [
    check('job_runs_job_check', sql`${table.job} in (${sql.raw(sqlValues(CRON_JOBS))})`),
    check('job_runs_outcome_check', sql`${table.outcome} in (${sql.raw(sqlValues(JOB_OUTCOMES))})`),
    check('job_runs_finished_check', sql`(${table.finishedAt} is null) = (${table.outcome} is null)`),
    index('job_runs_job_idx').on(table.job, table.startedAt),
  ],
);
