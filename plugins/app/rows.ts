import { type SQL, sql } from 'drizzle-orm';

/**
 * The rows of a raw SQL statement's result (`rowsOf<Row>(await tx.execute(sql`...`))`), typed as
 * the caller declares them: the one way repositories read `execute` results (node-postgres
 * answers `{ rows }`). Column names are PostgreSQL's (snake_case), and numbers past int4 arrive
 * as strings unless the query casts them.
 */
export const rowsOf = <T = Record<string, unknown>>(result: unknown): T[] => (result as { rows: T[] }).rows;

/** A value sent as one `jsonb` parameter (for `jsonb_to_recordset`: many rows in one statement). */
export const jsonb = (value: unknown): SQL => sql`${JSON.stringify(value)}::jsonb`;

/** Strings sent as one `text[]` parameter (for `= any(...)` and `unnest(...)`). */
export const textArray = (values: readonly string[]): SQL => sql`${sql.param(values)}::text[]`;
