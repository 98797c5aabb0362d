import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors.js';

/** The errors the grant engine refuses with. */

export const rewardNotFound = () => new NotFoundError('reward_not_found', 'No reward with this id.');
export const grantNotFound = () => new NotFoundError('grant_not_found', 'No grant with this id.');
export const promiseNotFound = () =>
  new NotFoundError('reward_promise_not_found', 'No promise of this reward with this key.');

export const rewardEmpty = () =>
  new ValidationError(
    'A reward gives something: coins, packs or collectibles.',
    [{ path: '/coins', message: 'the bundle is empty' }],
    'reward_empty',
  );

export const duplicateEntry = (path: string, id: string) =>
  new ValidationError(`${id} is named twice in the bundle: give one entry with its count.`, [
    { path, message: 'named twice' },
  ]);

export const scopeMismatch = (path: string, what: string) =>
  new ConflictError('reward_scope_mismatch', `A team's reward holds that team's ${what} only.`, [
    { path, message: `belongs to another team or to the platform` },
  ]);

export const stockInsufficient = (packId: string, needed: number, available: number) =>
  new ConflictError(
    'reward_stock_insufficient',
    `Pack ${packId} can give ${available} more packs; this needs ${needed}.`,
    [{ path: '/packs', message: `${packId}: ${available} available, ${needed} needed` }],
  );

export const rewardPackUnavailable = (packId: string, status: string) =>
  new ConflictError(
    'reward_pack_unavailable',
    `Pack ${packId} is ${status}: only active packs are promised or granted from supply.`,
  );

export const rewardExhausted = (key: string) =>
  new ConflictError('reward_exhausted', `The promise ${key} is used up (or released): it gives no more grants.`);

export const promiseConflict = (key: string) =>
  new ConflictError(
    'reward_promise_conflict',
    `The promise ${key} exists for another reward or count: a key names one promise.`,
  );

export const sourceKeyConflict = (sourceKey: string) =>
  new ConflictError(
    'grant_source_conflict',
    `The source key ${sourceKey} was granted for another user or reward: a key names one grant.`,
  );

/** Some users of an admin grant never signed in: the same code as one unknown user, naming them. */
export const usersNotFound = (unknown: readonly { index: number; userId: string }[]) =>
  new AppError(
    404,
    'user_not_found',
    'No user with these ids has signed in yet; users exist from their first request.',
    {
      details: unknown
        .slice(0, 20)
        .map(({ index, userId }) => ({ path: `/userIds/${index}`, message: `no user ${userId}` })),
    },
  );
