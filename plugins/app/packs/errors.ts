import type { PackAction, PackStatus } from '../../../schemas/enums.js';
import { MAX_POOL_ENTRIES } from '../../../schemas/packs.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { allowedFrom } from './lifecycle.js';

/** The errors packs are refused with. */

export const packNotFound = () => new NotFoundError('pack_not_found', 'No pack with this id.');

export const poolCommitted = (message: string, path: string) =>
  new ConflictError('pool_committed', `Packs already sold or reserved stay whole: ${message}.`, [{ path, message }]);

export const packNotDraft = (status: PackStatus, fields: readonly string[]) =>
  new ConflictError(
    'pack_not_draft',
    `The pack is ${status}: price, cardsPerPack, supply and maxPerUser can change only while it is a draft.`,
    fields.map((field) => ({ path: `/${field}`, message: `cannot change on a ${status} pack` })),
  );

export const supplyBelowSales = (sold: number, reserved: number) =>
  new ConflictError('supply_below_sales', `${sold} packs are sold and ${reserved} reserved: supply cannot be lower.`, [
    { path: '/supply', message: `must be at least ${sold + reserved}` },
  ]);

export const invalidTransition = (status: PackStatus, action: PackAction) =>
  new ConflictError(
    'invalid_transition',
    `Cannot ${action}: the pack is ${status}, and ${action} needs a pack that is ${allowedFrom(action).join(' or ')}.`,
    [{ path: '/action', message: `not allowed while the pack is ${status}` }],
  );

export const poolCannotFillPack = (copies: number, cardsPerPack: number) =>
  new ConflictError(
    'pool_cannot_fill_pack',
    `The pool holds ${copies} copies; a pack needs ${cardsPerPack}. Add collectibles before publishing.`,
  );

export const collectibleWrongTeam = () =>
  new ConflictError(
    'collectible_wrong_team',
    'This collectible belongs to another team; a pack can use its own team’s collectibles and global ones.',
    [{ path: '/collectibleId', message: 'belongs to another team' }],
  );

export const poolFull = () =>
  new ConflictError(
    'pool_full',
    `The pool holds ${MAX_POOL_ENTRIES} collectibles, the most a pack may have; remove one before adding another.`,
    [{ path: '/collectibleId', message: `the pool already has ${MAX_POOL_ENTRIES} entries` }],
  );

export const poolEntryNotFound = () =>
  new NotFoundError('pool_entry_not_found', 'This collectible is not in the pack’s pool.');
