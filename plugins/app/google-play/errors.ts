import { AppError, ConflictError, ForbiddenError, NotFoundError, ServiceUnavailableError } from '../errors.js';

/** Google Play's error factories, made in one place. */

/** The same code as the App Store's: a store this service is not configured for. */
export const storeUnavailable = () =>
  new ServiceUnavailableError('store_unavailable', 'Google Play purchases are not configured on this service.');

/** The same code as the App Store's: no bundle is sold under this store SKU. */
export const productNotFound = () =>
  new NotFoundError('store_product_not_found', 'No coin bundle is sold under this Google Play product id.');
export const purchaseNotFound = () =>
  new NotFoundError('store_purchase_not_found', 'Google Play knows no purchase of this product with this token.');
export const purchaseNotYours = () =>
  new ForbiddenError(
    'This purchase was made for another account: its obfuscatedExternalAccountId is not your user id.',
    'store_purchase_not_yours',
  );
export const purchaseCancelled = () =>
  new ConflictError('store_purchase_cancelled', 'This purchase was cancelled or refunded: it grants no coins.');
export const purchaseUnsupported = (detail: string) =>
  new ConflictError('store_purchase_unsupported', `This purchase cannot be credited: ${detail}.`);

/**
 * A call to Google that did not work: `status` is Google's HTTP status, or null when Google was
 * not reached (a timeout, a refused connection). `reason` is Google's error reason when it gave one.
 */
export class PlayApiError extends Error {
  readonly status: number | null;
  readonly reason?: string;
  /** The OAuth token endpoint failed, not the call itself: its 4xx say nothing about the purchase. */
  readonly auth: boolean;
  constructor(
    message: string,
    status: number | null,
    options: { reason?: string; cause?: unknown; auth?: boolean } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'PlayApiError';
    this.status = status;
    this.reason = options.reason;
    this.auth = options.auth ?? false;
  }
}

/**
 * A failed call to Google as the caller sees it: unreachable, overloaded or failing on Google's
 * side is 503 `store_unreachable` (try again); anything else Google refused (our credentials, our
 * request) or answered unreadably is 502 `store_error`. Never a 500: nothing is wrong with the
 * caller's request.
 */
export function toStoreError(error: PlayApiError): AppError {
  if (error.status === null || error.status === 429 || error.status >= 500)
    return new ServiceUnavailableError(
      'store_unreachable',
      'Google Play did not answer in time; try again shortly.',
      30,
    );
  return new AppError(502, 'store_error', 'Google Play refused this service’s request; try again later.');
}
