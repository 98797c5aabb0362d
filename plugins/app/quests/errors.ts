import type { QuestAction, QuestStatus } from '../../../schemas/enums.js';
import { ConflictError, type ErrorDetail, ValidationError } from '../errors.js';

/** The errors quests are refused with. */

export const invalidTransition = (status: QuestStatus, action: QuestAction, allowed: readonly QuestStatus[]) =>
  new ConflictError(
    'invalid_transition',
    `Cannot ${action}: the quest is ${status}, and ${action} needs a quest that is ${allowed.join(' or ')}.`,
    [{ path: '/action', message: `not allowed while the quest is ${status}` }],
  );

export const questImmutable = (status: QuestStatus, fields: readonly string[]) =>
  new ConflictError(
    'quest_immutable',
    status === 'ended'
      ? 'The quest has ended: nothing of it can change.'
      : `The quest is ${status}: only name, description and endsAt can change once it is published.`,
    fields.slice(0, 20).map((field) => ({ path: `/${field}`, message: `cannot change on an ${status} quest` })),
  );

/** Cross-field problems a schema cannot express (validateQuest). */
export const invalidQuest = (details: ErrorDetail[]) =>
  new ValidationError(
    details.length === 1
      ? `The quest is not valid: ${details[0]?.path} ${details[0]?.message}.`
      : 'The quest is not valid.',
    details.slice(0, 20),
  );
