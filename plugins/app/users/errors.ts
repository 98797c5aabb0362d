import { NotFoundError } from '../errors.js';

export const userNotFound = () =>
  new NotFoundError('user_not_found', 'No user with this id has signed in yet; users exist from their first request.');
