import { sql } from 'drizzle-orm';
import { check, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { ts } from './timestamps.js';

/**
 * What the mobile app reads at launch (GET /api/app-config): one row, the whole configuration as
 * one document, replaced as a whole by each edit. `version` counts the edits, so an edit made from
 * an older read is refused instead of overwriting another admin's.
 */
export const appConfig = pgTable(
  'app_config',
  {
    id: text('id').primaryKey(),
    document: jsonb('document').notNull(),
    version: integer('version').notNull(),
    updatedBy: text('updated_by'),
    updatedAt: ts('updated_at'),
  },
  (table) => [
    check('app_config_single_row', sql`${table.id} = 'app'`),
    check('app_config_version_check', sql`${table.version} >= 0`),
  ],
);

export type AppConfigRow = typeof appConfig.$inferSelect;
