import type { AuditLogRow } from '../../../db/schema.js';
import type { AuditEntry, AuditLogQuery } from '../../../schemas/audit.js';
import { authorizeList, type Principal } from '../auth/policy.js';
import type { DatabaseHandle } from '../database/index.js';
import { decodeCursor } from '../pagination.js';
import { listAudit } from './repository.js';

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

export function createAuditService(db: DatabaseHandle) {
  return {
    async list(principal: Principal, query: AuditLogQuery) {
      authorizeList(principal, 'audit:read', query.teamId);
      const page = await listAudit(
        db.orm,
        { teamId: query.teamId, targetId: query.targetId },
        {
          limit: query.limit ?? 50,
          after: decodeCursor(query.cursor),
        },
      );
      return { items: page.items.map(toAuditEntry), nextCursor: page.nextCursor };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
