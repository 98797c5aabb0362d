import { ForbiddenError } from '../errors.js';

/**
 * Who may do what to which resource: the one authorization decision of the admin API. A
 * resource belongs to a team or, with teamId null, to the platform. Today only platform admins
 * run the catalog; team roles (owner, editor, viewer) slot in here with the teams issue.
 */

export type Permission = 'catalog:read' | 'catalog:write' | 'audit:read';

export interface Principal {
  id: string;
  isAdmin: boolean;
}

export function isAllowed(principal: Principal, _permission: Permission, _resource: { teamId: string | null }): boolean {
  return principal.isAdmin;
}

export function authorize(principal: Principal, permission: Permission, resource: { teamId: string | null }): void {
  if (!isAllowed(principal, permission, resource)) {
    throw new ForbiddenError('You are not allowed to do this for this team.');
  }
}
