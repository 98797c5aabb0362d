import { index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { AUDIT_TARGET_TYPES } from '../../schemas/enums.js';

/** Append-only: who changed what, when, with the state before and after. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    actorId: text('actor_id').notNull(),
    action: text('action').notNull(),
    targetType: text('target_type', { enum: AUDIT_TARGET_TYPES }).notNull(),
    targetId: text('target_id').notNull(),
    teamId: text('team_id'),
    before: jsonb('before'),
    after: jsonb('after'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (table) => [
    index('audit_log_created_idx').on(table.createdAt.desc(), table.id.desc()),
    index('audit_log_team_created_idx').on(table.teamId, table.createdAt.desc(), table.id.desc()),
    index('audit_log_target_created_idx').on(table.targetId, table.createdAt.desc(), table.id.desc()),
  ],
);

export type AuditLogRow = typeof auditLog.$inferSelect;
