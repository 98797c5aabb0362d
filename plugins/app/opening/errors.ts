import { NotFoundError } from '../errors.js';

export const userPackNotFound = () =>
  new NotFoundError('user_pack_not_found', 'You own no pack with this id of this kind.');
export const noUnopenedPack = () => new NotFoundError('no_unopened_pack', 'You have no unopened pack of this kind.');
export const openNotFound = () => new NotFoundError('open_not_found', 'You have opened no pack with this id.');
