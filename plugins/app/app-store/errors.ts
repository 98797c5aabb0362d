import { ServiceUnavailableError } from '../errors.js';

/** The App Store domain's error factories. */

export const storeUnavailable = () =>
  new ServiceUnavailableError('store_unavailable', 'App Store purchases are not configured on this service.');

/** The App Store Server API did not take consumption information: Apple sends the request again. */
export const appleApiUnavailable = () =>
  new ServiceUnavailableError('store_unavailable', 'The App Store Server API did not answer; try again later.', 60);
