import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../database/index.js';
import { rowsOf } from '../rows.js';

/** What every invariant check shares: at most EXAMPLES violations each, read by one query. */

export const EXAMPLES = 20;

export interface Invariant {
  name: string;
  check: (db: Database) => Promise<string[]>;
}

export const rows = async <T>(db: Database, query: SQL): Promise<T[]> => rowsOf<T>(await db.execute(query));

/** Runs a query that selects violating rows; each row becomes one line. */
export const violations = (query: SQL) => async (db: Database) =>
  (await rows<Record<string, unknown>>(db, sql`${query} limit ${EXAMPLES + 1}`)).map((row, index) =>
    index === EXAMPLES ? 'and more' : JSON.stringify(row),
  );
