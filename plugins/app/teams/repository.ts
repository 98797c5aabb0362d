import { and, count, desc, eq, type SQL } from 'drizzle-orm';
import { type TeamAdminRow, type TeamRow, teamAdmins, teams } from '../../../db/schema.js';
import type { TeamRole } from '../auth/policy.js';
import type { Database } from '../database/index.js';
import { afterCursor, type PageRequest, toPage } from '../pagination.js';

/** SQL of teams and their members. Writes run inside the caller's transaction. */

export async function findTeam(
  db: Database,
  id: string,
  options: { lock?: boolean } = {},
): Promise<TeamRow | undefined> {
  const query = db.select().from(teams).where(eq(teams.id, id));
  // Locking the team row serializes every membership change of the team (the last-owner rule).
  // NO KEY UPDATE, not UPDATE: a catalog write holding a member row FOR SHARE (withCurrentRole)
  // then inserts a pack or collectible, whose foreign-key check takes the team row FOR KEY SHARE;
  // FOR UPDATE would block that check while the membership change waits for the member row.
  const [row] = options.lock ? await query.for('no key update') : await query;
  return row;
}

export async function teamExists(db: Database, teamId: string): Promise<boolean> {
  const [row] = await db.select({ id: teams.id }).from(teams).where(eq(teams.id, teamId));
  return row !== undefined;
}

/** Inserts the team, or returns undefined when its slug is taken. */
export async function insertTeam(tx: Database, row: typeof teams.$inferInsert): Promise<TeamRow | undefined> {
  const [created] = await tx.insert(teams).values(row).onConflictDoNothing({ target: teams.slug }).returning();
  return created;
}

export async function listTeams(db: Database, page: PageRequest) {
  const rows = await db
    .select()
    .from(teams)
    .where(afterCursor(teams.createdAt, teams.id, page.after))
    .orderBy(desc(teams.createdAt), desc(teams.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

export async function findMember(db: Database, teamId: string, userId: string): Promise<TeamAdminRow | undefined> {
  const [row] = await db
    .select()
    .from(teamAdmins)
    .where(and(eq(teamAdmins.teamId, teamId), eq(teamAdmins.userId, userId)));
  return row;
}

/**
 * The user's role in the team, read with a share lock on the membership row: a concurrent role
 * change or removal waits for the caller's transaction, or has committed and is seen.
 */
export async function lockMemberRole(tx: Database, teamId: string, userId: string): Promise<TeamRole | undefined> {
  const [row] = await tx
    .select({ role: teamAdmins.role })
    .from(teamAdmins)
    .where(and(eq(teamAdmins.teamId, teamId), eq(teamAdmins.userId, userId)))
    .for('share');
  return row?.role;
}

export async function insertMember(tx: Database, row: typeof teamAdmins.$inferInsert): Promise<TeamAdminRow> {
  const [created] = await tx.insert(teamAdmins).values(row).returning();
  return created as TeamAdminRow;
}

export async function updateMemberRole(
  tx: Database,
  teamId: string,
  userId: string,
  role: TeamRole,
): Promise<TeamAdminRow> {
  const [row] = await tx
    .update(teamAdmins)
    .set({ role })
    .where(and(eq(teamAdmins.teamId, teamId), eq(teamAdmins.userId, userId)))
    .returning();
  return row as TeamAdminRow;
}

export async function deleteMember(tx: Database, teamId: string, userId: string): Promise<void> {
  await tx.delete(teamAdmins).where(and(eq(teamAdmins.teamId, teamId), eq(teamAdmins.userId, userId)));
}

export async function countOwners(tx: Database, teamId: string): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(teamAdmins)
    .where(and(eq(teamAdmins.teamId, teamId), eq(teamAdmins.role, 'owner')));
  return row?.n ?? 0;
}

export async function listMembers(db: Database, teamId: string, filters: { role?: TeamRole }, page: PageRequest) {
  const conditions: SQL[] = [eq(teamAdmins.teamId, teamId)];
  if (filters.role !== undefined) conditions.push(eq(teamAdmins.role, filters.role));
  const rows = await db
    .select()
    .from(teamAdmins)
    .where(and(...conditions, afterCursor(teamAdmins.createdAt, teamAdmins.userId, page.after)))
    .orderBy(desc(teamAdmins.createdAt), desc(teamAdmins.userId))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.userId }));
}
