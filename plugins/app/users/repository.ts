import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { teamAdmins, type UserRow, users } from '../../../db/schema.js';
import type { TeamRole } from '../auth/policy.js';
import type { Database } from '../database/index.js';

/** SQL of users. Writes run in the caller's transaction when one is given. */

/** A user row, inside the caller's transaction (demo data; real users are provisioned on sight). */
export async function insertUser(tx: Database, row: typeof users.$inferInsert): Promise<void> {
  await tx.insert(users).values(row).onConflictDoNothing();
}

/**
 * Whether the user exists. `active` also refuses a deleted account, holding the row (shared) so
 * that an account deletion running at the same moment is seen, or waits for the caller's change.
 */
export async function userExists(tx: Database, userId: string, options: { active?: boolean } = {}): Promise<boolean> {
  const query = tx.select({ id: users.id, deletedAt: users.deletedAt }).from(users).where(eq(users.id, userId));
  const [row] = options.active ? await query.for('share') : await query;
  return row !== undefined && !(options.active && row.deletedAt);
}

export function findUser(db: Database, id: string): Promise<UserRow | undefined> {
  return db.query.users.findFirst({ where: eq(users.id, id) });
}

/** The user's role in each team where it has one. */
export async function teamRolesOf(db: Database, id: string): Promise<Map<string, TeamRole>> {
  const rows = await db
    .select({ teamId: teamAdmins.teamId, role: teamAdmins.role })
    .from(teamAdmins)
    .where(eq(teamAdmins.userId, id));
  return new Map(rows.map((row) => [row.teamId, row.role]));
}

/** Users with their team roles, in one query, for the ids asked for (each id answered in order). */
export async function usersWithRoles(
  db: Database,
  ids: readonly string[],
): Promise<({ user: UserRow; roles: { teamId: string; role: TeamRole }[] } | undefined)[]> {
  const rows = await db
    .select({
      user: users,
      roles: sql<
        { teamId: string; role: TeamRole }[]
      >`coalesce((select json_agg(json_build_object('teamId', ${teamAdmins.teamId}, 'role', ${teamAdmins.role})) from ${teamAdmins} where ${teamAdmins.userId} = ${users.id}), '[]'::json)`,
    })
    .from(users)
    .where(inArray(users.id, [...new Set(ids)]));
  const byId = new Map(rows.map((row) => [row.user.id, row]));
  return ids.map((id) => byId.get(id));
}

export async function updateDisplayName(db: Database, id: string, displayName: string): Promise<UserRow | undefined> {
  // A deleted account keeps its anonymous name, whatever request was still in flight.
  const [updated] = await db
    .update(users)
    .set({ displayName })
    .where(and(eq(users.id, id), isNull(users.deletedAt)))
    .returning();
  return updated;
}

export async function touchLastSeen(db: Database, id: string): Promise<UserRow | undefined> {
  const [refreshed] = await db.update(users).set({ lastSeenAt: sql`now()` }).where(eq(users.id, id)).returning();
  return refreshed;
}

/** Creates the user unless it exists (then answers undefined): two first requests may race. */
export async function createUserIfAbsent(db: Database, id: string, displayName: string): Promise<UserRow | undefined> {
  const [created] = await db.insert(users).values({ id, displayName }).onConflictDoNothing().returning();
  return created;
}

/** The display names of the users named (unknown ones left out). */
export async function displayNamesOf(db: Database, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: users.id, displayName: users.displayName })
    .from(users)
    .where(inArray(users.id, [...ids]));
  return new Map(rows.map((row) => [row.id, row.displayName]));
}
