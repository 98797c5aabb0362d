import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from '../../../db/schema.js';
import type { EventType } from '../../../schemas/events.js';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../../../schemas/webhooks.js';

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** An endpoint as its admins see it: never its secrets. */
export function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    teamId: row.teamId,
    url: row.url,
    description: row.description,
    events: row.eventTypes as EventType[],
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    disabledAt: iso(row.disabledAt),
    disabledDetail: row.disabledDetail,
    failingSince: iso(row.failingSince),
    previousSecretExpiresAt: iso(row.previousSecretExpiresAt),
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * An endpoint as its audit rows keep it: its URL without the query string, which may carry a
 * receiver's token, since every member of the team (viewers too) reads the team's audit log.
 */
export function toAuditedEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  const url = new URL(row.url);
  return { ...toEndpoint(row), url: `${url.origin}${url.pathname}` };
}

export function toDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpointId,
    webhookId: row.messageId,
    eventId: row.eventId === null ? null : String(row.eventId),
    type: row.eventType,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: iso(row.nextAttemptAt),
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: iso(row.deliveredAt),
  };
}

export function toAttempt(row: WebhookAttemptRow): WebhookAttempt {
  return {
    id: row.id,
    deliveryId: row.deliveryId,
    attemptedAt: row.attemptedAt.toISOString(),
    outcome: row.outcome,
    statusCode: row.statusCode,
    error: row.error,
    durationMs: row.durationMs,
    address: row.address,
    responseBody: row.responseBody,
  };
}
