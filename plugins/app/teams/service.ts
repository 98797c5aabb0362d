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
import { recordAudit } from '../audit/repository.js';
import {
  authorize,
  forbidden,
  type Principal,
  requireAdminAccess,
  type TeamRole,
  teamNotFound,
} from '../auth/policy.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { decodeCursor } from '../pagination.js';
import { userExists, userNotFound } from '../users/repository.js';
import { withCurrentRole } from './current-role.js';
import {
  countOwners,
  deleteMember,
  findMember,
  findTeam,
  insertMember,
  insertTeam,
  listMembers,
  listTeams,
  updateMemberRole,
} from './repository.js';

const memberNotFound = () => new NotFoundError('member_not_found', 'This user has no role in this team.');
const lastOwner = () =>
  new ConflictError('last_owner', 'A team always keeps at least one owner: make someone else owner first.');

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

/** A slug from a team name: "FC Köln 1948" → "fc-koln-1948". */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/, '');
  return slug || 'team';
}

export const MAX_SLUG_LENGTH = 60;
const SLUG_ATTEMPTS = 5;

/** `base` with a suffix, cut so the whole stays within the slug's length: "team" → "team-3fa9". */
export function withSlugSuffix(base: string, suffix: string): string {
  return `${base.slice(0, MAX_SLUG_LENGTH - suffix.length - 1).replace(/-+$/, '')}-${suffix}`;
}

export function createTeamsService(db: DatabaseHandle) {
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
      const { result, audit } = await work(tx, now);
      if (audit) {
        await recordAudit(tx, { actorId: principal.id, targetType: 'team_member', teamId, ...audit }, now);
      }
      return result;
    });
  }

  return {
    async create(principal: Principal, body: CreateTeamBody): Promise<Team> {
      requireAdminAccess(principal);
      authorize(principal, 'team:create', { teamId: null }, forbidden);
      const ownerId = body.ownerUserId ?? principal.id;
      return db.transaction(async (tx) => {
        if (!(await userExists(tx, ownerId, { active: true }))) throw userNotFound();
        const now = new Date();
        const values = { id: randomUUID(), name: body.name.trim(), createdAt: now };
        const base = body.slug ?? slugify(body.name);
        let team = await insertTeam(tx, { ...values, slug: base });
        // A slug made from the name gets a short suffix when taken; a slug the caller chose does not.
        for (let attempt = 0; !team && body.slug === undefined && attempt < SLUG_ATTEMPTS; attempt++) {
          team = await insertTeam(tx, { ...values, slug: withSlugSuffix(base, randomBytes(2).toString('hex')) });
        }
        if (!team) {
          throw new ConflictError('slug_taken', 'Another team has this slug; choose another.', [
            { path: '/slug', message: 'is taken' },
          ]);
        }
        const owner = await insertMember(tx, {
          teamId: team.id,
          userId: ownerId,
          role: 'owner',
          createdAt: now,
          addedBy: principal.id,
        });
        await recordAudit(
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
        await recordAudit(
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
        return toTeam(team);
      });
    },

    async list(query: TeamListQuery) {
      const page = await listTeams(db.orm, { limit: query.limit ?? 50, after: decodeCursor(query.cursor) });
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
          throw new ConflictError(
            'already_member',
            `This user is already ${existing.role} of the team; change the role with PATCH .../members/{userId}.`,
            [{ path: '/userId', message: `already has the role ${existing.role}` }],
          );
        }
        if (!(await userExists(tx, body.userId, { active: true }))) throw userNotFound();
        const member = toTeamAdmin(
          await insertMember(tx, { teamId, userId: body.userId, role, createdAt: now, addedBy: principal.id }),
        );
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
      const page = await listMembers(
        db.orm,
        teamId,
        { role: query.role },
        { limit: query.limit ?? 50, after: decodeCursor(query.cursor) },
      );
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
