import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from '../../../db/schema.js';

/** The database and its transactions share this type, so repositories take either. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);
const MAX_TRANSACTION_ATTEMPTS = 4;

/**
 * Thrown by work that finds, part-way, that what it read has changed under it (a pack archived
 * while a batch was selling it): like a serialization failure, the transaction is rolled back and
 * run again, and reads what is true now.
 */
export class ChangedMeanwhileError extends Error {
  readonly code = '40001';
  constructor(message: string) {
    super(message);
    this.name = 'ChangedMeanwhileError';
  }
}

/**
 * Runs `work` in one transaction. A serialization failure or deadlock (or ChangedMeanwhileError)
 * is retried, up to four attempts in all: the work must be safe to run again.
 */
export async function runTransaction<T>(orm: Database, work: (tx: Database) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await orm.transaction((tx) => work(tx as unknown as Database));
    } catch (error) {
      const code =
        (error as { code?: string; cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
      if (attempt >= MAX_TRANSACTION_ATTEMPTS || !code || !RETRYABLE_SQLSTATES.has(code)) throw error;
    }
  }
}
