import { type Principal, withTeamRole } from '../auth/policy.js';
import type { Database } from '../database/index.js';
import { lockMemberRole } from './repository.js';

/**
 * The caller as it stands now for a resource of `teamId`, inside the transaction that changes
 * it: the role loaded with the request may have been taken away by a change that committed
 * meanwhile (a demoted editor must not complete a publish). Platform admins and platform
 * resources do not depend on team roles.
 */
export async function withCurrentRole(tx: Database, principal: Principal, teamId: string | null): Promise<Principal> {
  if (principal.isAdmin || teamId === null) return principal;
  return withTeamRole(principal, teamId, await lockMemberRole(tx, teamId, principal.id));
}
