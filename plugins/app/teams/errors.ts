import type { TeamRole } from '../../../schemas/enums.js';
import { ConflictError, NotFoundError } from '../errors.js';

export const memberNotFound = () => new NotFoundError('member_not_found', 'This user has no role in this team.');
export const lastOwner = () =>
  new ConflictError('last_owner', 'A team always keeps at least one owner: make someone else owner first.');
export const slugTaken = () =>
  new ConflictError('slug_taken', 'Another team has this slug; choose another.', [
    { path: '/slug', message: 'is taken' },
  ]);
export const alreadyMember = (role: TeamRole) =>
  new ConflictError(
    'already_member',
    `This user is already ${role} of the team; change the role with PATCH .../members/{userId}.`,
    [{ path: '/userId', message: `already has the role ${role}` }],
  );
