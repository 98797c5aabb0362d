import { type AppError, ForbiddenError } from '../errors.js';

/**
 * Who may do what to which resource: the one authorization decision of the admin API. A
 * resource belongs to a team or, with teamId null, to the platform. Today only platform admins
 * run the catalog; team roles (owner, editor, viewer) slot in here with the teams issue.
 *
 * Existence stays hidden (DESIGN.md §5): a caller with no admin role anywhere is refused (403)
 * before any lookup, and a resource the caller may not even read answers as if it did not exist.
 */

export type Permission = 'catalog:read' | 'catalog:write' | 'audit:read';

export interface Principal {
  id: string;
  isAdmin: boolean;
}

export function isAllowed(principal: Principal, _permission: Permission, _resource: { teamId: string | null }): boolean {
  return principal.isAdmin;
}

/** Whether the caller may use the admin API at all (platform admin, later: any team role). */
export function hasAdminAccess(principal: Principal): boolean {
  return principal.isAdmin;
}

export const forbidden = () => new ForbiddenError('You are not allowed to do this.');

/** Refuses callers without any admin role, before anything is looked up. */
export function requireAdminAccess(principal: Principal): void {
  if (!hasAdminAccess(principal)) throw forbidden();
}

/**
 * Refuses `permission` on `resource`: as `notFound` when the caller may not even read it (so its
 * existence does not leak), else 403.
 */
export function authorize(
  principal: Principal,
  permission: Permission,
  resource: { teamId: string | null },
  notFound: () => AppError,
): void {
  if (isAllowed(principal, permission, resource)) return;
  throw isAllowed(principal, 'catalog:read', resource) ? forbidden() : notFound();
}
