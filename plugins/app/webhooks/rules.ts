import { isLoopbackHost } from '../../../config/index.js';
import type { WebhookAttemptOutcome, WebhookDeliveryStatus, WebhookDisabledReason } from '../../../schemas/enums.js';
import type { DomainEvent } from '../../../schemas/events.js';
import { PING_TYPE } from '../../../schemas/webhooks.js';
import { PLAIN_HTTP_RULE, targetUrlProblem } from './transport.js';

/** The pure rules of outbound webhooks: targets, matching, payloads, and what an attempt's outcome changes. */

/**
 * The waits after the 1st, 2nd ... 7th failed attempt (before jitter); after that the last one
 * repeats. A receiver that fails now and then still gets every event, and one that stays down is
 * disabled after FAILING_DISABLE_MS anyway.
 */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
] as const;
/** Each wait is moved by up to this fraction either way, so endpoints that failed together do not retry together. */
export const JITTER = 0.2;
/** An endpoint whose every attempt failed for this long is disabled. */
export const FAILING_DISABLE_MS = 5 * 24 * 3_600_000;

/** The wait after the `attempts`-th failed attempt, before jitter: the schedule, then its last step again. */
const baseDelayMs = (attempts: number): number =>
  RETRY_DELAYS_MS[Math.min(attempts, RETRY_DELAYS_MS.length) - 1] as number;

/**
 * Attempts in all before a delivery is given up (`failed`, replayable): as many as the schedule
 * fits in FAILING_DISABLE_MS, so a delivery is retried for about as long as its endpoint may fail
 * before it is disabled (17: about 4.9 days).
 */
export const MAX_ATTEMPTS = (() => {
  let attempts = 1;
  let elapsed = 0;
  while (elapsed + baseDelayMs(attempts) <= FAILING_DISABLE_MS) elapsed += baseDelayMs(attempts++);
  return attempts;
})();
/** A payload larger than this is sent thinned (its ids only). */
export const PAYLOAD_MAX_BYTES = 20 * 1024;
/** Deliveries that ended (delivered or failed) are kept this long for their owners to look at and replay. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;
/** How long a signing secret replaced by a rotation still signs beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/**
 * The wait before the next attempt after `attempts` failed ones, with `random` in [0, 1) placing
 * it within ±JITTER of the schedule; null once MAX_ATTEMPTS were made (give up).
 */
export function retryDelayMs(attempts: number, random: number): number | null {
  if (attempts < 1 || attempts >= MAX_ATTEMPTS) return null;
  return Math.round(baseDelayMs(attempts) * (1 - JITTER + 2 * JITTER * random));
}

/**
 * Why `raw` cannot be an endpoint's URL, or null when it can: the transport's rule (https; no
 * credentials; a literal address in a refused range), and at registration also no fragment, no
 * `localhost`, and, where private targets are allowed, plain http only to a loopback host.
 * Nothing is resolved or connected: a host name is checked when each attempt resolves it.
 */
export function endpointUrlProblem(raw: string, allowPrivate: boolean): string | null {
  const problem = targetUrlProblem(raw, { allowPrivate });
  if (problem) return problem;
  const url = new URL(raw);
  // A host name cannot be checked without resolving it: only `localhost` passes for plain http.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return PLAIN_HTTP_RULE;
  if (url.hash) return 'the URL must not have a #fragment';
  const host = url.hostname.toLowerCase();
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost')))
    return 'the host is this machine (localhost)';
  return null;
}

export interface EndpointSubscription {
  id: string;
  teamId: string | null;
  eventTypes: readonly string[];
  createdAt: Date;
}

/**
 * The endpoints that receive `event`: subscribed to its type, registered by the time it happened,
 * and the platform's (every event) or its own team's. A team's endpoint never receives an event
 * of another team, nor one of no team.
 */
export function endpointsFor(event: DomainEvent, endpoints: readonly EndpointSubscription[]): EndpointSubscription[] {
  return endpoints.filter(
    (endpoint) =>
      (endpoint.teamId === null || endpoint.teamId === event.teamId) &&
      endpoint.eventTypes.includes(event.type) &&
      event.occurredAt.getTime() >= endpoint.createdAt.getTime(),
  );
}

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * The JSON body of an event's deliveries, `{ type, timestamp, data }` (Standard Webhooks): the
 * event's data with who and what it concerns. Over PAYLOAD_MAX_BYTES, data keeps the ids only
 * and says `truncated: true`.
 */
export function eventPayload(event: DomainEvent): string {
  const context = { teamId: event.teamId ?? null, userId: event.userId ?? null, subject: event.subject };
  const timestamp = event.occurredAt.toISOString();
  const full = JSON.stringify({ type: event.type, timestamp, data: { ...context, ...event.data } });
  if (byteLength(full) <= PAYLOAD_MAX_BYTES) return full;
  return JSON.stringify({ type: event.type, timestamp, data: { ...context, truncated: true } });
}

export function pingPayload(endpointId: string, at: Date): string {
  return JSON.stringify({
    type: PING_TYPE,
    timestamp: at.toISOString(),
    data: { endpointId, message: 'A test ping: your endpoint is reachable and can verify our signature.' },
  });
}

/** The secrets that sign now: the current one, and the one it replaced while the overlap lasts. */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null },
  now: Date,
): string[] {
  const previousLive =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    endpoint.previousSecretExpiresAt.getTime() > now.getTime();
  return previousLive ? [endpoint.secret, endpoint.previousSecret as string] : [endpoint.secret];
}

export interface AttemptResult {
  outcome: WebhookAttemptOutcome;
  status: number | null;
  error: string | null;
}

export interface AttemptEffects {
  delivery: {
    status: WebhookDeliveryStatus;
    nextAttemptAt: Date | null;
    deliveredAt: Date | null;
    lastError: string | null;
  };
  /** The endpoint's run of failures: cleared by a success, started by a first failure; undefined: unchanged. */
  failingSince?: Date | null;
  /** The endpoint is disabled now, with why. */
  disable?: { reason: WebhookDisabledReason; detail: string };
}

/** What an attempt's error reads as in the lists. */
export function attemptError(result: AttemptResult): string | null {
  if (result.outcome === 'delivered') return null;
  return (result.error ?? (result.status === null ? 'no answer' : `answered HTTP ${result.status}`)).slice(0, 500);
}

/**
 * What one attempt changes, at `at`: the delivery (delivered, retried later, or given up) and its
 * endpoint (its run of failures; disabled at once by a 410, or after FAILING_DISABLE_MS of
 * failures). A test ping is tried once and changes nothing of its endpoint.
 */
export function afterAttempt(
  state: { attempts: number; ping: boolean; failingSince: Date | null },
  result: AttemptResult,
  at: Date,
  random: number,
): AttemptEffects {
  const lastError = attemptError(result);
  if (result.outcome === 'delivered') {
    return {
      delivery: { status: 'delivered', nextAttemptAt: null, deliveredAt: at, lastError },
      ...(state.ping ? {} : { failingSince: null }),
    };
  }
  const failed = { status: 'failed' as const, nextAttemptAt: null, deliveredAt: null, lastError };
  if (state.ping) return { delivery: failed };
  if (result.outcome === 'gone') {
    return {
      delivery: failed,
      failingSince: state.failingSince ?? at,
      disable: { reason: 'gone', detail: `The endpoint answered 410 Gone at ${at.toISOString()}.` },
    };
  }
  const failingSince = state.failingSince ?? at;
  if (at.getTime() - failingSince.getTime() >= FAILING_DISABLE_MS) {
    return {
      delivery: failed,
      failingSince,
      disable: {
        reason: 'failing',
        detail: `Every attempt failed since ${failingSince.toISOString()}; the last: ${lastError}`.slice(0, 500),
      },
    };
  }
  const delay = retryDelayMs(state.attempts, random);
  return {
    delivery:
      delay === null
        ? failed
        : { status: 'pending', nextAttemptAt: new Date(at.getTime() + delay), deliveredAt: null, lastError },
    failingSince,
  };
}
