import { NotFoundError } from '../errors.js';

/** The errors of coin bundles and their prices, made in one place. */

export const productNotFound = () => new NotFoundError('product_not_found', 'No product with this id.');
export const priceNotFound = () => new NotFoundError('price_not_found', 'No price with this id.');
