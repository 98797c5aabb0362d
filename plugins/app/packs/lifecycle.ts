/**
 * The pack state machine, as data and pure functions. The repository applies it
 * inside a transaction that holds the pack's row lock.
 */

import { PACK_ACTIONS, PACK_STATUSES, type PackAction, type PackStatus } from '../../../schemas/enums.js';

export { PACK_ACTIONS, PACK_STATUSES, type PackAction, type PackStatus };

/** action → (from → to). A missing cell is an invalid transition. */
export const TRANSITIONS: Readonly<Record<PackAction, Partial<Record<PackStatus, PackStatus>>>> = {
  publish: { draft: 'active' },
  archive: { draft: 'archived', active: 'archived' },
  restore: { archived: 'draft' },
  addCollectible: { draft: 'draft' },
  removeCollectible: { draft: 'draft' },
};

/** The status after `action`, or undefined when the action is not allowed from `status`. */
export function nextStatus(status: PackStatus, action: PackAction): PackStatus | undefined {
  return TRANSITIONS[action][status];
}

/** The statuses an action may start from, for error messages ("publish needs a draft pack"). */
export function allowedFrom(action: PackAction): PackStatus[] {
  return PACK_STATUSES.filter((status) => TRANSITIONS[action][status] !== undefined);
}
