import { TEAM_ROLES, type TeamRole } from '../../../schemas/enums.js';
import { type AppError, ForbiddenError, NotFoundError } from '../errors.js';

/**
 * The authorization matrix: who may do what to which resource, as one pure
 * function. A resource belongs to a team or, with teamId null, to the platform.
 *
 * | action            | platform admin | owner | editor | viewer |
 * |-------------------|----------------|-------|--------|--------|
 * | team:create       | yes            | –     | –      | –      |
 * | members:read      | yes            | own   | own    | own    |
 * | members:manage    | yes            | own   | –      | –      |
 * | catalog:read      | yes            | own   | own    | own    |
 * | catalog:write     | yes            | own   | own    | –      |
 * | audit:read        | yes            | own   | own    | own    |
 * | webhooks:manage   | yes            | own   | –      | –      |
 *
 * "own" = resources of the teams where the caller has that role; platform resources
 * (teamId null) are the platform admins' alone. Everyone else: nothing.
 *
 * Existence stays hidden: a caller with no admin role anywhere is refused (403) before any
 * lookup, and a resource the caller may not even read answers as if it did not exist.
 */

export { TEAM_ROLES, type TeamRole };

export const ADMIN_ACTIONS = [
  'team:create',
  'members:read',
  'members:manage',
  'catalog:read',
  'catalog:write',
  'audit:read',
  'webhooks:manage',
] as const;
export type AdminAction = (typeof ADMIN_ACTIONS)[number];

export interface Principal {
  id: string;
  isAdmin: boolean;
  /** teamId → the caller's role there. */
  teamRoles: ReadonlyMap<string, TeamRole>;
}

const ROLE_ACTIONS: Record<TeamRole, ReadonlySet<AdminAction>> = {
  owner: new Set(['members:read', 'members:manage', 'catalog:read', 'catalog:write', 'audit:read', 'webhooks:manage']),
  editor: new Set(['members:read', 'catalog:read', 'catalog:write', 'audit:read']),
  viewer: new Set(['members:read', 'catalog:read', 'audit:read']),
};

/** The matrix itself: allow or deny, nothing else. */
export function isAllowed(principal: Principal, action: AdminAction, resource: { teamId: string | null }): boolean {
  if (principal.isAdmin) return true;
  if (resource.teamId === null) return false;
  const role = principal.teamRoles.get(resource.teamId);
  return role !== undefined && ROLE_ACTIONS[role].has(action);
}

/** The principal with its role in `teamId` replaced (none: no role there), as read under a lock. */
export function withTeamRole(principal: Principal, teamId: string, role: TeamRole | undefined): Principal {
  const teamRoles = new Map(principal.teamRoles);
  if (role) teamRoles.set(teamId, role);
  else teamRoles.delete(teamId);
  return { ...principal, teamRoles };
}

/** Whether the caller may use the admin API at all: a platform admin or a member of some team. */
export function hasAdminAccess(principal: Principal): boolean {
  return principal.isAdmin || principal.teamRoles.size > 0;
}

export const forbidden = () => new ForbiddenError('You are not allowed to do this.');
/** Also what a team the caller may not see answers. */
export const teamNotFound = () => new NotFoundError('team_not_found', 'No team with this id.');

/** Refuses callers without any admin role, before anything is looked up. */
export function requireAdminAccess(principal: Principal): void {
  if (!hasAdminAccess(principal)) throw forbidden();
}

/**
 * Refuses `action` on `resource`: as `notFound` when the caller may not even read it (so its
 * existence does not leak), else 403.
 */
export function authorize(
  principal: Principal,
  action: AdminAction,
  resource: { teamId: string | null },
  notFound: () => AppError,
): void {
  if (isAllowed(principal, action, resource)) return;
  const readAction: AdminAction = action.startsWith('members')
    ? 'members:read'
    : action === 'audit:read'
      ? 'audit:read'
      : 'catalog:read';
  throw isAllowed(principal, readAction, resource) ? forbidden() : notFound();
}

/**
 * An admin list, filtered by `teamId` or not: without it the list spans every team and is the
 * platform admins'; with it, a team the caller cannot read answers as an unknown team.
 */
export function authorizeList(principal: Principal, action: AdminAction, teamId: string | undefined): void {
  requireAdminAccess(principal);
  authorize(principal, action, { teamId: teamId ?? null }, teamId === undefined ? forbidden : teamNotFound);
}
