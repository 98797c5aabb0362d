import { NotFoundError } from '../errors.js';

export const collectibleNotFound = () => new NotFoundError('collectible_not_found', 'No collectible with this id.');
