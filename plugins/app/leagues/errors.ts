import { AppError, ConflictError, type ErrorDetail, NotFoundError, ValidationError } from '../errors.js';

/** The errors leagues, rounds, lineups and scores are refused with. */

const firstProblem = (what: string, details: readonly ErrorDetail[]) =>
  details.length === 1 ? `${what}: ${details[0]?.path} ${details[0]?.message}.` : `${what}.`;

export const leagueNotFound = () => new NotFoundError('league_not_found', 'No league with this id.');
export const roundNotFound = () => new NotFoundError('round_not_found', 'No round with this id in this league.');
export const lineupNotFound = () =>
  new NotFoundError('lineup_not_found', 'You have no lineup in this round: PUT one while the round is open.');

export const invalidLeague = (details: ErrorDetail[]) =>
  new ValidationError(firstProblem('The league is not valid', details), details.slice(0, 20));
export const invalidRound = (details: ErrorDetail[]) =>
  new ValidationError(firstProblem('The round is not valid', details), details.slice(0, 20));

export const unknownTimeZone = (path = '/timeZone') =>
  new ValidationError('Unknown time zone: use an IANA name such as Europe/London.', [
    { path, message: 'not a time zone of the tz database' },
  ]);

export const rewardNotInScope = (index: number) =>
  new AppError(
    404,
    'reward_not_found',
    "No reward with this id in the league's scope (its team's rewards, or the platform's for a platform admin).",
    { details: [{ path: `/prizes/${index}/rewardId`, message: 'unknown, or not a reward of this league' }] },
  );

export const leagueArchived = () =>
  new ConflictError('league_archived', 'The league is archived: it takes no new rounds and no lineups.');

export const rulesFrozen = () =>
  new ConflictError(
    'league_rules_frozen',
    'A round of this league is locked or final: its rules can no longer change (make a new league).',
    [{ path: '/rules', message: 'frozen once a round has locked' }],
  );

export const roundImmutable = (status: string, fields: readonly string[]) =>
  new ConflictError(
    'round_immutable',
    status === 'open'
      ? 'The round is open: only name, locksAt, endsAt and finalizesAt can change.'
      : `The round is ${status}: nothing of it can change.`,
    fields.slice(0, 20).map((field) => ({ path: `/${field}`, message: `cannot change while the round is ${status}` })),
  );

export const locksAtPassed = () =>
  new ValidationError('locksAt cannot move into the past.', [{ path: '/locksAt', message: 'before now' }]);

export const roundWindowConflict = (details: ErrorDetail[]) =>
  new ConflictError(
    'round_window_conflict',
    'The new play window would overlap another round holding a copy of one of this round’s lineups.',
    details.slice(0, 20),
  );

export const roundNotOpen = () =>
  new ConflictError('round_not_open', 'The round is not open yet: lineups are accepted from opensAt.');
export const roundLocked = () =>
  new ConflictError('round_locked', 'The round has locked: lineups can no longer change.');
export const roundNotLocked = () =>
  new ConflictError('round_not_locked', 'The round has not locked yet: scores and finalization come after locksAt.');
export const roundFinal = () =>
  new ConflictError('round_final', 'The round is final: its scores and standings can no longer change.');
export const roundNotFinal = () =>
  new ConflictError('round_not_final', 'The round is not final yet: standings exist once it is finalized.');

export const pullsNotOwned = (details: ErrorDetail[]) =>
  new AppError(404, 'pull_not_found', 'Some copies are not yours (or do not exist).', {
    details: details.slice(0, 20),
  });

export const invalidLineup = (details: ErrorDetail[]) =>
  new ValidationError(
    firstProblem('The lineup breaks the league’s rules', details),
    details.slice(0, 20),
    'lineup_invalid',
  );

export const copyInOverlappingRound = (details: ErrorDetail[]) =>
  new ConflictError(
    'copy_in_overlapping_round',
    'Some copies are in a lineup of another round whose play overlaps this one.',
    details.slice(0, 20),
  );

export const duplicateScores = (details: ErrorDetail[]) =>
  new ValidationError('A collectible is scored twice in one request.', details.slice(0, 20));

export const roundScoresFull = (max: number) =>
  new ConflictError('round_scores_full', `A round scores at most ${max} collectibles.`);
