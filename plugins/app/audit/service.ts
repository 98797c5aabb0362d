import type { AuditLogRow } from '../../../db/schema.js';
import type { AuditEntry, AuditLogQuery, AuditRecord } from '../../../schemas/audit.js';
import { authorizeList, type Principal } from '../auth/policy.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { pageOf } from '../pagination.js';
import { listAudit, recordAudit } from './repository.js';

export function toAuditEntry(row: AuditLogRow): AuditEntry {
  return {
    id: row.id,
    actorId: row.actorId,
    action: row.action,
    targetType: row.targetType,
    targetId: row.targetId,
    teamId: row.teamId,
    before: row.before ?? null,
    after: row.after ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The audit log: every admin change appends a row in its own transaction; admins read it. */
export function createAuditService(db: DatabaseHandle) {
  return {
    /** Appends one row in the caller's transaction, so the change and its row land together or not at all. */
    record(tx: Database, entry: AuditRecord, at: Date): Promise<void> {
      return recordAudit(tx, entry, at);
    },

    async list(principal: Principal, query: AuditLogQuery) {
      authorizeList(principal, 'audit:read', query.teamId);
      const page = await listAudit(db.orm, { teamId: query.teamId, targetId: query.targetId }, pageOf(query));
      return { items: page.items.map(toAuditEntry), nextCursor: page.nextCursor };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
