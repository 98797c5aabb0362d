import type { AuditLogRow } from '../../../db/schema.js';
import type { AuditEntryView, AuditLogQuery } from '../../../schemas/audit.js';
import { authorize, forbidden, type Principal, requireAdminAccess } from '../auth/policy.js';
import { teamNotFound } from '../teams/service.js';
import type { DatabaseHandle } from '../db.js';
import { decodeCursor } from '../pagination.js';
import { listAudit } from './repository.js';

export function toAuditEntry(row: AuditLogRow): AuditEntryView {
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
      requireAdminAccess(principal);
      // The whole log (no teamId) is the platform admins'; a team's log, its members' (teams issue).
      authorize(principal, 'audit:read', { teamId: query.teamId ?? null }, query.teamId ? teamNotFound : forbidden);
      const page = await listAudit(db.orm, { teamId: query.teamId, targetId: query.targetId }, {
        limit: query.limit ?? 50,
        after: decodeCursor(query.cursor),
      });
      return { items: page.items.map(toAuditEntry), nextCursor: page.nextCursor };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
