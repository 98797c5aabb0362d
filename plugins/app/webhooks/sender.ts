import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import type { WebhookAttemptRow, WebhookDeliveryRow } from '../../../db/schema.js';
import { PING_TYPE } from '../../../schemas/webhooks.js';
import type { DatabaseHandle } from '../database/index.js';
import {
  type ClaimedDelivery,
  claimDue,
  disableEndpoint,
  findDelivery,
  findEndpoint,
  recordAttempt,
  updateEndpoint,
} from './repository.js';
import { type AttemptEffects, afterAttempt, attemptError, signingSecrets } from './rules.js';
import { webhookHeaders } from './signing.js';
import { type SendResult, sendWebhook } from './transport.js';

/** An attempt gives up waiting for an answer after this long. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** A claimed delivery is its sender's this long: well past an attempt's timeout, short enough that one whose sender died is soon retried. */
export const LEASE_MS = 60_000;
/** Deliveries one instance sends at once, and at most this many to one endpoint (a slow one does not hold up the rest). */
export const MAX_IN_FLIGHT = 32;
export const PER_ENDPOINT = 8;
/** The fallback when a NOTIFY is missed or a retry falls due: the sender looks for due deliveries this often. */
export const POLL_MS = 1000;

/** Whether an attempt's effects change its endpoint: its run of failures, or disabling it. */
function changesEndpoint(endpoint: { failingSince: Date | null; enabled: boolean }, effects: AttemptEffects): boolean {
  const failingChanges =
    effects.failingSince !== undefined &&
    (effects.failingSince?.getTime() ?? null) !== (endpoint.failingSince?.getTime() ?? null);
  return failingChanges || (endpoint.enabled && effects.disable !== undefined);
}

export interface SenderDeps {
  db: DatabaseHandle;
  log: FastifyBaseLogger;
  allowPrivateTargets: boolean;
}

/**
 * Sends deliveries: claims due ones under a lease (safe across instances), signs and POSTs each
 * with the transport (SSRF-checked, 15 s timeout, redirects not followed), and records every
 * attempt and what it changes (rules.ts afterAttempt).
 */
export function createSender({ db, log, allowPrivateTargets }: SenderDeps) {
  const stopping = new AbortController();
  // Every attempt in flight listens to it.
  setMaxListeners(MAX_IN_FLIGHT * 4, stopping.signal);

  async function send(claimed: ClaimedDelivery): Promise<SendResult> {
    const now = new Date();
    const timestamp = Math.floor(now.getTime() / 1000);
    const headers = webhookHeaders(signingSecrets(claimed, now), claimed.messageId, timestamp, claimed.body);
    const started = performance.now();
    try {
      return await sendWebhook(
        { url: claimed.url, headers, body: claimed.body },
        { allowPrivate: allowPrivateTargets, timeoutMs: ATTEMPT_TIMEOUT_MS, signal: stopping.signal },
      );
    } catch (error) {
      // The transport answers its failures; anything it throws is one all the same.
      return {
        outcome: 'failed',
        status: null,
        error: `could not send: ${(error as Error).message ?? String(error)}`,
        durationMs: Math.round(performance.now() - started),
        address: null,
        responseBody: null,
      };
    }
  }

  /**
   * Sends one claimed delivery and records the attempt. Its effects (the next attempt's time, the
   * run of failures) are computed at `when`, by default when the attempt ended. Answers the delivery
   * as it stands after, and the attempt.
   */
  async function attempt(
    claimed: ClaimedDelivery,
    when?: Date,
  ): Promise<{ delivery: WebhookDeliveryRow | undefined; attempt: WebhookAttemptRow }> {
    const result = await send(claimed);
    const at = when ?? new Date();
    const row: WebhookAttemptRow = {
      id: randomUUID(),
      deliveryId: claimed.id,
      attemptedAt: new Date(),
      outcome: result.outcome,
      statusCode: result.status,
      error: attemptError(result),
      durationMs: Math.max(0, Math.round(result.durationMs)),
      address: result.address,
      responseBody: result.responseBody,
    };
    const ping = claimed.eventType === PING_TYPE;
    const random = Math.random();
    const effectsFor = (failingSince: Date | null) =>
      afterAttempt({ attempts: claimed.attempts, ping, failingSince }, result, at, random);
    const delivery = await db.transaction(async (tx) => {
      let endpoint = await findEndpoint(tx, claimed.endpointId);
      let effects = effectsFor(endpoint?.failingSince ?? null);
      // Only an attempt that changes its endpoint takes the endpoint's row lock, which orders the
      // attempts of one endpoint that end at once: successes on a healthy endpoint never wait.
      if (endpoint && changesEndpoint(endpoint, effects)) {
        endpoint = await findEndpoint(tx, claimed.endpointId, { lock: true });
        effects = effectsFor(endpoint?.failingSince ?? null);
      }
      const recorded = await recordAttempt(tx, claimed, row, { ...effects.delivery, lastStatusCode: result.status });
      // What the attempt showed of the endpoint holds even if the delivery was handed on meanwhile.
      if (endpoint && changesEndpoint(endpoint, effects)) {
        if (effects.failingSince !== undefined)
          await updateEndpoint(tx, endpoint.id, { failingSince: effects.failingSince });
        if (endpoint.enabled && effects.disable) {
          await disableEndpoint(tx, endpoint.id, effects.disable, at);
          log.warn({ endpointId: endpoint.id, reason: effects.disable.reason }, 'a webhook endpoint was disabled');
        }
      }
      return recorded ?? (await findDelivery(tx, claimed.endpointId, claimed.id));
    });
    return { delivery, attempt: row };
  }

  function claim(options: { at: Date; limit: number; busy?: readonly string[] }) {
    return claimDue(db.orm, {
      at: options.at,
      limit: options.limit,
      perEndpoint: PER_ENDPOINT,
      busy: options.busy ?? [],
      leaseId: randomUUID(),
      leaseMs: LEASE_MS,
    });
  }

  return {
    leaseMs: LEASE_MS,
    attempt,
    claim,

    /**
     * Sends every delivery due by `at` (default now) and waits for the attempts; answers how many
     * were made. For tests and scripts: `at` in the future acts as if that time had come (a retry's
     * wait, five days of failures).
     */
    async runDue(options: { at?: Date } = {}): Promise<number> {
      // Due by the time of the call: a retry that falls due while this runs is the next run's.
      const dueBy = options.at ?? new Date();
      let attempted = 0;
      for (;;) {
        const claimed = await claim({ at: dueBy, limit: MAX_IN_FLIGHT });
        if (claimed.length === 0) return attempted;
        await Promise.all(claimed.map((delivery) => attempt(delivery, options.at)));
        attempted += claimed.length;
      }
    },

    /** Cuts the attempts in flight short (they are recorded as failed and retried): the instance is stopping. */
    abort() {
      stopping.abort(new Error('the instance is shutting down'));
    },
  };
}

export type Sender = ReturnType<typeof createSender>;

/**
 * Runs the sender in the background: woken by `wake()` (a NOTIFY, the poll, an attempt that
 * ended), it claims as many due deliveries as it has room for and starts them without waiting,
 * so a slow endpoint holds up at most PER_ENDPOINT slots, never the others' deliveries.
 */
export function runSenderInBackground(sender: Sender, log: FastifyBaseLogger) {
  const inFlight = new Map<string, number>();
  let total = 0;
  let claiming = false;
  let again = false;
  let stopped = false;
  const running = new Set<Promise<unknown>>();

  const start = (delivery: ClaimedDelivery) => {
    total++;
    inFlight.set(delivery.endpointId, (inFlight.get(delivery.endpointId) ?? 0) + 1);
    const run = sender
      .attempt(delivery)
      .catch((error) => log.warn({ err: error, deliveryId: delivery.id }, 'a webhook attempt could not be recorded'))
      .finally(() => {
        total--;
        const left = (inFlight.get(delivery.endpointId) ?? 1) - 1;
        if (left > 0) inFlight.set(delivery.endpointId, left);
        else inFlight.delete(delivery.endpointId);
        running.delete(run);
        wake();
      });
    running.add(run);
  };

  async function fill(): Promise<void> {
    do {
      again = false;
      const room = MAX_IN_FLIGHT - total;
      if (room <= 0 || stopped) return;
      const busy = [...inFlight].filter(([, count]) => count >= PER_ENDPOINT).map(([id]) => id);
      const claimed = await sender.claim({ at: new Date(), limit: room, busy });
      for (const delivery of claimed) start(delivery);
      if (claimed.length === room) again = true;
    } while (again && !stopped);
  }

  function wake(): void {
    if (stopped) return;
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    fill()
      .catch((error) => log.warn({ err: error }, 'claiming webhook deliveries failed; the next wake retries'))
      .finally(() => {
        claiming = false;
        if (again) wake();
      });
  }

  const poll = setInterval(wake, POLL_MS);
  poll.unref();
  return {
    wake,
    async stop() {
      stopped = true;
      clearInterval(poll);
      sender.abort();
      await Promise.allSettled([...running]);
    },
  };
}
