import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import { PAGE_LIMITS } from '../../schemas/common.js';
import { ValidationError } from './errors.js';

/**
 * Keyset pagination: a cursor is the sort key of the last row of a page, `[timestamp, id]`,
 * base64url-encoded JSON. Opaque to clients; one that does not parse is a 400 invalid_cursor.
 */

export interface CursorKey {
  at: Date;
  id: string;
}

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.at.toISOString(), key.id])).toString('base64url');
}

const CURSOR_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function decodeCursor(cursor: string | undefined): CursorKey | undefined {
  if (cursor === undefined) return undefined;
  const invalid = () =>
    new ValidationError(
      'The cursor is not valid; use the nextCursor of a previous page.',
      [{ path: '/querystring/cursor', message: 'is not a cursor this API issued' }],
      'invalid_cursor',
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [at, id] = parsed as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || id.length === 0 || id.length > 128 || id.includes('\u0000')) {
    throw invalid();
  }
  // Four-digit years only: JavaScript dates reach far beyond PostgreSQL's timestamps (4713 BC to
  // 294276 AD), and no row of this service was written outside 0000-9999.
  const date = new Date(at);
  if (!CURSOR_TIMESTAMP.test(at) || Number.isNaN(date.getTime()) || date.toISOString() !== at) throw invalid();
  return { at: date, id };
}

/** Splits the `limit + 1` rows a query fetched into the page and the next page's cursor. */
export function toPage<T>(
  rows: T[],
  limit: number,
  keyOf: (row: T) => CursorKey,
): { items: T[]; nextCursor: string | null } {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeCursor(keyOf(items[items.length - 1] as T)) };
}

/** The keyset condition "after the cursor" for a list ordered by (at desc, id desc). */
export function afterCursor(atColumn: AnyColumn, idColumn: AnyColumn, after: CursorKey | undefined): SQL | undefined {
  return after ? sql`(${atColumn}, ${idColumn}) < (${after.at}, ${after.id})` : undefined;
}

/** What a repository's list reads: how many rows, after which cursor. */
export interface PageRequest {
  limit: number;
  after?: CursorKey;
}

/** A list query's page: its limit (the schema's default when it names none) and its decoded cursor. */
export function pageOf(
  query: { limit?: number; cursor?: string },
  limits: { default: number } = PAGE_LIMITS,
): PageRequest {
  return { limit: query.limit ?? limits.default, after: decodeCursor(query.cursor) };
}
