import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { teamAdmins, type UserRow, users } from '../../../db/schema.js';
import type { TeamRole } from '../auth/policy.js';
import { KeyedBatcher } from '../database/batcher.js';
import type { Database } from '../database/index.js';
import { NotFoundError } from '../errors.js';

/** How often a returning user's lastSeenAt is refreshed: a write per request would be wasteful. */
const LAST_SEEN_RESOLUTION_SECONDS = 300;
/** The most subjects one lookup reads. */
const MAX_LOOKUP_BATCH = 100;

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

export const userNotFound = () =>
  new NotFoundError('user_not_found', 'No user with this id has signed in yet; users exist from their first request.');

/** Lookups that run at once, each for the subjects of its share (a saturated pool does not chain them). */
const LOOKUP_LANES = 4;

/** A subject's lane: the same subject always in the same one. */
const laneOf = (id: string) => `users-${id.charCodeAt(id.length - 1) % LOOKUP_LANES}`;

export function createUsersRepository(db: Database, options: { queueLimitMs?: number; log?: FastifyBaseLogger } = {}) {
  /**
   * Known users with their team roles, looked up for many requests at once: the subjects asked for
   * while a lookup runs are read together by the next one (one query for a crowd of callers
   * rather than one each). Each request's lookup still starts after it arrived, so it sees every
   * change committed before it.
   */
  const lookups = new KeyedBatcher<string, { user: UserRow; roles: { teamId: string; role: TeamRole }[] } | undefined>(
    async (_key, ids) => {
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
    },
    MAX_LOOKUP_BATCH,
    {
      maxWaitMs: options.queueLimitMs,
      onFault: ({ error, size }) => options.log?.warn({ err: error, size }, 'a user lookup failed'),
    },
  );

  return {
    findById(id: string): Promise<UserRow | undefined> {
      return db.query.users.findFirst({ where: eq(users.id, id) });
    },

    /** The user's role in each team where it has one. */
    async teamRoles(id: string): Promise<Map<string, TeamRole>> {
      const rows = await db
        .select({ teamId: teamAdmins.teamId, role: teamAdmins.role })
        .from(teamAdmins)
        .where(eq(teamAdmins.userId, id));
      return new Map(rows.map((row) => [row.teamId, row.role]));
    },

    async updateDisplayName(id: string, displayName: string): Promise<UserRow | undefined> {
      // A deleted account keeps its anonymous name, whatever request was still in flight.
      const [updated] = await db
        .update(users)
        .set({ displayName })
        .where(and(eq(users.id, id), isNull(users.deletedAt)))
        .returning();
      return updated;
    },

    /**
     * Just-in-time provisioning: the user row of a verified subject, created on first sight, and
     * its team roles. For a known user, a share of one query (its row with its roles, read with
     * those of the other callers arriving meanwhile); the insert and the lastSeenAt refresh are
     * conditional writes, safe when two first requests of one subject race.
     */
    async provision(id: string, displayName: string): Promise<{ user: UserRow; teamRoles: Map<string, TeamRole> }> {
      // Identity never rests on a round trip: a row read back must carry exactly the subject asked for.
      const same = (row: UserRow): UserRow => {
        if (row.id !== id)
          throw new Error('the database returned another user id than the subject asked for; refusing the identity');
        return row;
      };
      const existing = await lookups.submit(laneOf(id), id);
      if (existing) {
        const teamRoles = new Map(existing.roles.map((entry) => [entry.teamId, entry.role]));
        const ageSeconds = (Date.now() - existing.user.lastSeenAt.getTime()) / 1000;
        if (ageSeconds < LAST_SEEN_RESOLUTION_SECONDS) return { user: same(existing.user), teamRoles };
        const [refreshed] = await db.update(users).set({ lastSeenAt: sql`now()` }).where(eq(users.id, id)).returning();
        return { user: same(refreshed ?? existing.user), teamRoles };
      }
      const [created] = await db.insert(users).values({ id, displayName }).onConflictDoNothing().returning();
      if (created) return { user: same(created), teamRoles: new Map() };
      const raced = await db.query.users.findFirst({ where: eq(users.id, id) });
      if (!raced) throw new Error(`user ${id} vanished while being provisioned`);
      return { user: same(raced), teamRoles: await this.teamRoles(id) };
    },
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
