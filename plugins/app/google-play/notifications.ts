import type { FastifyBaseLogger } from 'fastify';
import type { DatabaseHandle } from '../database/index.js';
import { AppError, ServiceUnavailableError, UnauthorizedError } from '../errors.js';
import { storeUnavailable } from './errors.js';
import { JwksUnavailableError, type PushVerifier, PushTokenRejected } from './pubsub.js';
import { messageHandled, recordMessage } from './repository.js';
import { ONE_TIME_NOTIFICATION, readPush, VOIDED_ONE_TIME } from './rules.js';
import type { GooglePlayService } from './service.js';

/**
 * Real-time developer notifications, pushed by Pub/Sub: the push's OIDC token is checked before the
 * body is read; each message is handled once (by its message id, recorded after its effect, which
 * is itself idempotent); what the message says only names the purchase to read again from Google.
 */
export function createPushHandler(deps: {
  db: DatabaseHandle;
  verify: PushVerifier | null;
  packageName: string | null;
  service: Pick<GooglePlayService, 'oneTimeProductChanged' | 'purchaseVoided'>;
  log: FastifyBaseLogger;
}) {
  const { db, verify, packageName, service, log } = deps;

  async function authenticate(authorization: string | undefined): Promise<void> {
    if (!verify || !packageName) throw storeUnavailable();
    try {
      await verify(authorization);
    } catch (error) {
      if (error instanceof JwksUnavailableError) {
        log.error({ err: error.cause ?? error }, 'Google OIDC keys lookup failed');
        throw new ServiceUnavailableError(
          'auth_unavailable',
          'The token of the push cannot be checked right now; deliver the message again later.',
          error.retryAfterSeconds,
        );
      }
      if (!(error instanceof PushTokenRejected)) throw error;
      log.warn({ reason: error.message }, 'a Google Play notification push was refused: bad OIDC token');
      throw error.missing
        ? new UnauthorizedError('missing_credentials', 'Pub/Sub pushes carry an OIDC token; this one has none.')
        : new UnauthorizedError('invalid_token', 'The OIDC token of the push is not valid for this subscription.');
    }
  }

  /** Handles one push; answers once it is safe for Pub/Sub to forget the message. */
  return async function handlePush(authorization: string | undefined, raw: unknown): Promise<void> {
    await authenticate(authorization);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : String(raw));
    } catch {
      body = undefined;
    }
    const push = readPush(body);
    if (!push) throw new AppError(400, 'invalid_push', 'The body is not a Pub/Sub push message.');
    const { messageId, notification } = push;
    if (await messageHandled(db.orm, messageId)) return;
    let outcome: string;
    if (!notification) {
      // A message no retry will make readable: acknowledged, so Pub/Sub stops sending it.
      log.warn({ messageId }, 'a Pub/Sub message that is not a developer notification: acknowledged and ignored');
      outcome = 'unreadable';
    } else if (notification.packageName !== packageName) {
      log.warn({ messageId, packageName: notification.packageName }, 'a notification for another app: ignored');
      outcome = 'another app';
    } else if (notification.kind === 'oneTimeProduct') {
      outcome =
        notification.notificationType === ONE_TIME_NOTIFICATION.purchased ||
        notification.notificationType === ONE_TIME_NOTIFICATION.canceled
          ? await service.oneTimeProductChanged(notification.sku, notification.purchaseToken)
          : 'ignored type';
    } else if (notification.kind === 'voided') {
      outcome =
        notification.productType === null || notification.productType === VOIDED_ONE_TIME
          ? await service.purchaseVoided(notification.purchaseToken)
          : 'a subscription: ignored';
    } else outcome = notification.kind === 'test' ? 'test notification' : 'ignored kind';
    await recordMessage(db.orm, messageId, notification?.kind ?? 'unreadable');
    log.info({ messageId, kind: notification?.kind, outcome }, 'Google Play notification handled');
  };
}

export type PushHandler = ReturnType<typeof createPushHandler>;
