import type { FastifyBaseLogger } from 'fastify';
import type { UserRow } from '../../../db/schema.js';
import type { TeamRole } from '../auth/policy.js';
import { KeyedBatcher } from '../database/batcher.js';
import type { Database } from '../database/index.js';
import { userNotFound } from './errors.js';
import {
  displayNamesOf,
  createUserIfAbsent,
  findUser,
  teamRolesOf,
  touchLastSeen,
  updateDisplayName,
  userExists,
  usersWithRoles,
} from './repository.js';

/** How often a returning user's lastSeenAt is refreshed: a write per request would be wasteful. */
const LAST_SEEN_RESOLUTION_SECONDS = 300;
/** The most subjects one lookup reads. */
const MAX_LOOKUP_BATCH = 100;
/** Lookups that run at once, each for the subjects of its share (a saturated pool does not chain them). */
const LOOKUP_LANES = 4;

/** A subject's lane: the same subject always in the same one. */
const laneOf = (id: string) => `users-${id.charCodeAt(id.length - 1) % LOOKUP_LANES}`;

/** Users: provisioned on sight, with their team roles; other domains ask whether one exists. */
export function createUsersService(db: Database, options: { queueLimitMs?: number; log?: FastifyBaseLogger } = {}) {
  /**
   * Known users with their team roles, looked up for many requests at once: the subjects asked for
   * while a lookup runs are read together by the next one (one query for a crowd of callers
   * rather than one each). Each request's lookup still starts after it arrived, so it sees every
   * change committed before it.
   */
  const lookups = new KeyedBatcher<string, { user: UserRow; roles: { teamId: string; role: TeamRole }[] } | undefined>(
    (_key, ids) => usersWithRoles(db, ids),
    MAX_LOOKUP_BATCH,
    {
      maxWaitMs: options.queueLimitMs,
      onFault: ({ error, size }) => options.log?.warn({ err: error, size }, 'a user lookup failed'),
    },
  );

  return {
    findById(id: string): Promise<UserRow | undefined> {
      return findUser(db, id);
    },

    /** The user's role in each team where it has one. */
    teamRoles(id: string): Promise<Map<string, TeamRole>> {
      return teamRolesOf(db, id);
    },

    updateDisplayName(id: string, displayName: string): Promise<UserRow | undefined> {
      return updateDisplayName(db, id, displayName);
    },

    /** The display names of the users named, in one query (a page of a board): unknown ones left out. */
    displayNames(ids: readonly string[]): Promise<Map<string, string>> {
      return displayNamesOf(db, ids);
    },

    /**
     * Whether the user exists, in the caller's transaction. `active` also refuses a deleted
     * account, holding its row (shared) until the caller's change commits.
     */
    exists(tx: Database, userId: string, existsOptions: { active?: boolean } = {}): Promise<boolean> {
      return userExists(tx, userId, existsOptions);
    },

    /** As `exists`, refusing a missing user with 404 `user_not_found`. */
    async ensureExists(tx: Database, userId: string, existsOptions: { active?: boolean } = {}): Promise<void> {
      if (!(await userExists(tx, userId, existsOptions))) throw userNotFound();
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
        const refreshed = await touchLastSeen(db, id);
        return { user: same(refreshed ?? existing.user), teamRoles };
      }
      const created = await createUserIfAbsent(db, id, displayName);
      if (created) return { user: same(created), teamRoles: new Map() };
      const raced = await findUser(db, id);
      if (!raced) throw new Error(`user ${id} vanished while being provisioned`);
      return { user: same(raced), teamRoles: await teamRolesOf(db, id) };
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
