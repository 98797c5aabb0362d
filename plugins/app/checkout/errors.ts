import { NotFoundError, ServiceUnavailableError } from '../errors.js';

/** Checkout's error factories, made in one place (inline throws of a single use stay where they are). */

/** A fan's order that is not theirs answers as one that does not exist. */
export const orderNotFound = () => new NotFoundError('order_not_found', 'You have no order with this id.');
export const adminOrderNotFound = () => new NotFoundError('order_not_found', 'No order with this id.');
export const unavailable = () =>
  new ServiceUnavailableError('checkout_unavailable', 'Checkout is not available right now; try again later.', 30);
