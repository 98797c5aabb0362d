import { randomUUID } from 'node:crypto';
import { and, desc, eq, type SQL } from 'drizzle-orm';
import { type AuditLogRow, auditLog } from '../../../db/schema.js';
import type { AuditRecord } from '../../../schemas/audit.js';
import type { Database } from '../database/index.js';
import { afterCursor, type PageRequest, toPage } from '../pagination.js';

/** Appends one row; call it inside the transaction that makes the change, so both or neither land. */
export async function recordAudit(tx: Database, entry: AuditRecord, at: Date): Promise<void> {
  await tx.insert(auditLog).values({ id: randomUUID(), ...entry, createdAt: at });
}

export async function listAudit(
  db: Database,
  filters: { teamId?: string; targetId?: string },
  page: PageRequest,
): Promise<{ items: AuditLogRow[]; nextCursor: string | null }> {
  const conditions: SQL[] = [];
  if (filters.teamId !== undefined) conditions.push(eq(auditLog.teamId, filters.teamId));
  if (filters.targetId !== undefined) conditions.push(eq(auditLog.targetId, filters.targetId));
  const rows = await db
    .select()
    .from(auditLog)
    .where(and(...conditions, afterCursor(auditLog.createdAt, auditLog.id, page.after)))
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}
