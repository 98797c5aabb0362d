import type { QuestAction, QuestStatus } from '../../../schemas/enums.js';
import { ConflictError, type ErrorDetail, NotFoundError, ValidationError } from '../errors.js';

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

export const questNotFound = () => new NotFoundError('quest_not_found', 'No quest with this id.');

export const rewardNotInScope = () =>
  new NotFoundError(
    'reward_not_found',
    'No reward with this id in the quest’s scope (a team quest gives its team’s rewards).',
  );

export const maxCompletionsRequired = () =>
  new ValidationError(
    'A reward with packs or collectibles needs maxCompletions: that many are reserved when the quest is published.',
    [{ path: '/maxCompletions', message: 'required when the reward holds packs or collectibles' }],
  );

export const questNotCompleted = (period: string) =>
  new ConflictError('quest_not_completed', `The quest is not completed for the period ${period}.`, [
    { path: '/period', message: 'not completed' },
  ]);

export const questNotActive = () =>
  new ConflictError('quest_not_active', 'The quest has ended: its rewards can no longer be claimed.');

export const questExhausted = () =>
  new ConflictError('quest_exhausted', 'Every completion this quest can reward has been claimed.');

export const unknownPeriod = (period: string) =>
  new ValidationError(`The quest has no period ${period}.`, [
    { path: '/period', message: 'not a period of this quest' },
  ]);

export const questEndsBeforePublication = () =>
  new ValidationError('The quest would end before it starts: its endsAt has passed.', [
    { path: '/endsAt', message: 'in the past: move it later before publishing' },
  ]);
