import { ConflictError, NotFoundError, ValidationError } from '../errors.js';

/** The errors outbound webhooks are refused with. */

export const webhookNotFound = () => new NotFoundError('webhook_not_found', 'No webhook endpoint with this id here.');

export const deliveryNotFound = () =>
  new NotFoundError('webhook_delivery_not_found', 'No delivery with this id for this webhook endpoint.');

export const invalidWebhookUrl = (problem: string) =>
  new ValidationError(
    `The webhook URL is refused: ${problem}.`,
    [{ path: '/url', message: problem }],
    'invalid_webhook_url',
  );

export const webhookDisabled = () =>
  new ConflictError(
    'webhook_disabled',
    'The webhook endpoint is disabled: enable it (PATCH with enabled: true) before replaying deliveries.',
  );
