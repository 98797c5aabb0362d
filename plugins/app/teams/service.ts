import { randomBytes, randomUUID } from 'node:crypto';
import type { TeamAdminRow, TeamRow } from '../../../db/schema.js';
import type {
  AddMemberBody,
  CreateTeamBody,
  MemberListQuery,
  Team,
  TeamAdmin,
  TeamListQuery,
  UpdateMemberBody,
} from '../../../schemas/teams.js';
import type { EventsService } from '../events/service.js';
import type { AuditService } from '../audit/service.js';
import {
  authorize,
  forbidden,
  type Principal,
  requireAdminAccess,
  type TeamRole,
  teamNotFound,
} from '../auth/policy.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { pageOf } from '../pagination.js';
import type { UsersService } from '../users/service.js';
import { withCurrentRole } from './current-role.js';
import { alreadyMember, lastOwner, memberNotFound, slugTaken } from './errors.js';
import {
  countOwners,
  deleteMember,
  findMember,
  findTeam,
  insertMember,
  insertTeam,
  listMembers,
  listTeams,
  teamExists,
  updateMemberRole,
} from './repository.js';
import { SLUG_ATTEMPTS, slugify, withSlugSuffix } from './rules.js';

export function toTeam(row: TeamRow): Team {
  return { id: row.id, name: row.name, slug: row.slug, createdAt: row.createdAt.toISOString() };
}

export function toTeamAdmin(row: TeamAdminRow): TeamAdmin {
  return {
    teamId: row.teamId,
    userId: row.userId,
    role: row.role,
    createdAt: row.createdAt.toISOString(),
    addedBy: row.addedBy,
  };
}

/** Teams and their members: every change is authorized, transactional and audited. */
export function createTeamsService({
  db,
  audit,
  users,
  events,
}: {
  db: DatabaseHandle;
  audit: AuditService;
  users: UsersService;
  events: Pick<EventsService, 'append'>;
}) {
  const memberAdded = (tx: Database, member: TeamAdmin) =>
    events.append(tx, {
      type: 'member.added',
      userId: member.userId,
      teamId: member.teamId,
      subject: member.userId,
      data: { teamId: member.teamId, userId: member.userId, role: member.role },
    });
  /** A membership change: in one transaction holding the team's row lock, authorized and audited. */
  async function changeMembers<T>(
    principal: Principal,
    teamId: string,
    work: (
      tx: Database,
      now: Date,
    ) => Promise<{ result: T; audit?: { action: string; targetId: string; before: unknown; after: unknown } }>,
  ): Promise<T> {
    requireAdminAccess(principal);
    return db.transaction(async (tx) => {
      const team = await findTeam(tx, teamId, { lock: true });
      if (!team) throw teamNotFound();
      // The caller's role in this team as it is now, under the team's lock.
      const current = await withCurrentRole(tx, principal, teamId);
      requireAdminAccess(current);
      authorize(current, 'members:manage', { teamId }, teamNotFound);
      const now = new Date();
      const { result, audit: change } = await work(tx, now);
      if (change) {
        await audit.record(tx, { actorId: principal.id, targetType: 'team_member', teamId, ...change }, now);
      }
      return result;
    });
  }

  return {
    /** Whether the team exists, in the caller's transaction (a team's pack or collectible names one). */
    exists(tx: Database, teamId: string): Promise<boolean> {
      return teamExists(tx, teamId);
    },

    /**
     * The caller as it stands now for a resource of `teamId`, in the caller's transaction: its
     * role re-read (and held) there, so a role taken away meanwhile no longer counts.
     */
    withCurrentRole(tx: Database, principal: Principal, teamId: string | null): Promise<Principal> {
      return withCurrentRole(tx, principal, teamId);
    },

    async create(principal: Principal, body: CreateTeamBody): Promise<Team> {
      requireAdminAccess(principal);
      authorize(principal, 'team:create', { teamId: null }, forbidden);
      const ownerId = body.ownerUserId ?? principal.id;
      return db.transaction(async (tx) => {
        await users.ensureExists(tx, ownerId, { active: true });
        const now = new Date();
        const values = { id: randomUUID(), name: body.name, createdAt: now };
        const base = body.slug ?? slugify(body.name);
        let team = await insertTeam(tx, { ...values, slug: base });
        // A slug made from the name gets a short suffix when taken; a slug the caller chose does not.
        for (let attempt = 0; !team && body.slug === undefined && attempt < SLUG_ATTEMPTS; attempt++) {
          team = await insertTeam(tx, { ...values, slug: withSlugSuffix(base, randomBytes(2).toString('hex')) });
        }
        if (!team) {
          throw slugTaken();
        }
        const owner = await insertMember(tx, {
          teamId: team.id,
          userId: ownerId,
          role: 'owner',
          createdAt: now,
          addedBy: principal.id,
        });
        await audit.record(
          tx,
          {
            actorId: principal.id,
            action: 'team.create',
            targetType: 'team',
            targetId: team.id,
            teamId: team.id,
            before: null,
            after: toTeam(team),
          },
          now,
        );
        await audit.record(
          tx,
          {
            actorId: principal.id,
            action: 'team.member.add',
            targetType: 'team_member',
            targetId: ownerId,
            teamId: team.id,
            before: null,
            after: toTeamAdmin(owner),
          },
          now,
        );
        await memberAdded(tx, toTeamAdmin(owner));
        return toTeam(team);
      });
    },

    async list(query: TeamListQuery) {
      const page = await listTeams(db.orm, pageOf(query));
      return { items: page.items.map(toTeam), nextCursor: page.nextCursor };
    },

    async get(teamId: string): Promise<Team> {
      const team = await findTeam(db.orm, teamId);
      if (!team) throw teamNotFound();
      return toTeam(team);
    },

    /** [spec] Adds a member: created (201), already there with that role (200), or a conflict. */
    addMember(
      principal: Principal,
      teamId: string,
      body: AddMemberBody,
    ): Promise<{ created: boolean; member: TeamAdmin }> {
      const role: TeamRole = body.role ?? 'editor';
      return changeMembers<{ created: boolean; member: TeamAdmin }>(principal, teamId, async (tx, now) => {
        const existing = await findMember(tx, teamId, body.userId);
        if (existing?.role === role) return { result: { created: false, member: toTeamAdmin(existing) } };
        if (existing) {
          throw alreadyMember(existing.role);
        }
        await users.ensureExists(tx, body.userId, { active: true });
        const member = toTeamAdmin(
          await insertMember(tx, { teamId, userId: body.userId, role, createdAt: now, addedBy: principal.id }),
        );
        await memberAdded(tx, member);
        return {
          result: { created: true, member },
          audit: { action: 'team.member.add', targetId: body.userId, before: null, after: member },
        };
      });
    },

    async listMembers(principal: Principal, teamId: string, query: MemberListQuery) {
      requireAdminAccess(principal);
      if (!(await findTeam(db.orm, teamId))) throw teamNotFound();
      authorize(principal, 'members:read', { teamId }, teamNotFound);
      const page = await listMembers(db.orm, teamId, { role: query.role }, pageOf(query));
      return { items: page.items.map(toTeamAdmin), nextCursor: page.nextCursor };
    },

    updateMember(principal: Principal, teamId: string, userId: string, body: UpdateMemberBody): Promise<TeamAdmin> {
      return changeMembers(principal, teamId, async (tx) => {
        const current = await findMember(tx, teamId, userId);
        if (!current) throw memberNotFound();
        if (current.role === body.role) return { result: toTeamAdmin(current) };
        if (current.role === 'owner' && (await countOwners(tx, teamId)) <= 1) throw lastOwner();
        const updated = toTeamAdmin(await updateMemberRole(tx, teamId, userId, body.role));
        return {
          result: updated,
          audit: { action: 'team.member.update', targetId: userId, before: toTeamAdmin(current), after: updated },
        };
      });
    },

    removeMember(principal: Principal, teamId: string, userId: string): Promise<TeamAdmin> {
      return changeMembers(principal, teamId, async (tx) => {
        const current = await findMember(tx, teamId, userId);
        if (!current) throw memberNotFound();
        if (current.role === 'owner' && (await countOwners(tx, teamId)) <= 1) throw lastOwner();
        await deleteMember(tx, teamId, userId);
        const removed = toTeamAdmin(current);
        return {
          result: removed,
          audit: { action: 'team.member.remove', targetId: userId, before: removed, after: null },
        };
      });
    },
  };
}

export type TeamsService = ReturnType<typeof createTeamsService>;
