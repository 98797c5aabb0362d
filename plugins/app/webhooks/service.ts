import { randomUUID } from 'node:crypto';
import type { WebhookEndpointRow } from '../../../db/schema.js';
import { PING_TYPE } from '../../../schemas/webhooks.js';
import type {
  AttemptListQuery,
  CreateWebhookBody,
  DeliveryListQuery,
  ReplayFailedBody,
  UpdateWebhookBody,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookListQuery,
} from '../../../schemas/webhooks.js';
import type { AuditService } from '../audit/service.js';
import { authorize, forbidden, type Principal, requireAdminAccess, teamNotFound } from '../auth/policy.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { pageOf } from '../pagination.js';
import type { TeamsService } from '../teams/service.js';
import { deliveryNotFound, invalidWebhookUrl, webhookDisabled, webhookNotFound } from './errors.js';
import { toAttempt, toAuditedEndpoint, toDelivery, toEndpoint } from './mappers.js';
import {
  deleteEndpoint,
  disableEndpoint,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  insertLeasedPing,
  listAttempts,
  listDeliveries,
  listEndpoints,
  notifySender,
  replayDelivery,
  replayFailedSince,
  updateEndpoint,
} from './repository.js';
import { endpointUrlProblem, pingPayload, ROTATION_OVERLAP_MS } from './rules.js';
import type { Sender } from './sender.js';
import { newSigningSecret } from './signing.js';

/** Whose endpoints: a team's (its owners and platform admins), or the platform's (teamId null: platform admins). */
export interface WebhookScope {
  teamId: string | null;
}

export interface WebhookAdminDeps {
  db: DatabaseHandle;
  teams: Pick<TeamsService, 'exists' | 'withCurrentRole'>;
  audit: Pick<AuditService, 'record'>;
  sender: Pick<Sender, 'attempt' | 'leaseMs'>;
  allowPrivateTargets: boolean;
}

/** Endpoints as their admins run them: registered, changed, rotated, tested; their deliveries listed and replayed. */
export function createWebhookAdmin({ db, teams, audit, sender, allowPrivateTargets }: WebhookAdminDeps) {
  /**
   * Work on a scope, in one transaction, for a caller allowed to manage its webhooks as it stands
   * now. Callers without any admin role are refused before anything is read; a team the caller
   * cannot read answers as unknown.
   */
  async function inScope<T>(principal: Principal, scope: WebhookScope, work: (tx: Database) => Promise<T>) {
    requireAdminAccess(principal);
    const notFound = scope.teamId === null ? forbidden : teamNotFound;
    authorize(principal, 'webhooks:manage', scope, notFound);
    return db.transaction(async (tx) => {
      if (scope.teamId !== null && !(await teams.exists(tx, scope.teamId))) throw teamNotFound();
      authorize(await teams.withCurrentRole(tx, principal, scope.teamId), 'webhooks:manage', scope, notFound);
      return work(tx);
    });
  }

  /** The scope's endpoint `id` (another scope's answers as unknown). */
  async function endpointOf(tx: Database, scope: WebhookScope, id: string, lock = false): Promise<WebhookEndpointRow> {
    const endpoint = await findEndpoint(tx, id, { lock });
    if (!endpoint || endpoint.teamId !== scope.teamId) throw webhookNotFound();
    return endpoint;
  }

  /** The audit row of a change to an endpoint, in the change's transaction. */
  function audited(
    tx: Database,
    principal: Principal,
    action: string,
    before: WebhookEndpointRow | null,
    after: WebhookEndpointRow | null,
  ): Promise<void> {
    const endpoint = (after ?? before) as WebhookEndpointRow;
    return audit.record(
      tx,
      {
        actorId: principal.id,
        action: `webhook.${action}`,
        targetType: 'webhook',
        targetId: endpoint.id,
        teamId: endpoint.teamId,
        before: before && toAuditedEndpoint(before),
        after: after && toAuditedEndpoint(after),
      },
      new Date(),
    );
  }

  function checkUrl(url: string): void {
    const problem = endpointUrlProblem(url, allowPrivateTargets);
    if (problem) throw invalidWebhookUrl(problem);
  }

  return {
    list(principal: Principal, scope: WebhookScope, query: WebhookListQuery) {
      const page = pageOf(query);
      return inScope(principal, scope, async (tx) => {
        const found = await listEndpoints(tx, scope.teamId, page);
        return { items: found.items.map(toEndpoint), nextCursor: found.nextCursor };
      });
    },

    get(principal: Principal, scope: WebhookScope, id: string): Promise<WebhookEndpoint> {
      return inScope(principal, scope, async (tx) => toEndpoint(await endpointOf(tx, scope, id)));
    },

    /** Registers an endpoint; its secret is in this answer only. Nothing is connected to. */
    create(principal: Principal, scope: WebhookScope, body: CreateWebhookBody): Promise<WebhookEndpointWithSecret> {
      checkUrl(body.url);
      return inScope(principal, scope, async (tx) => {
        const secret = newSigningSecret();
        const enabled = body.enabled ?? true;
        const now = new Date();
        const created = await insertEndpoint(tx, {
          id: randomUUID(),
          teamId: scope.teamId,
          url: body.url,
          description: body.description ?? '',
          eventTypes: body.events,
          enabled,
          ...(enabled
            ? {}
            : { disabledReason: 'manual' as const, disabledAt: now, disabledDetail: 'Created disabled.' }),
          secret,
          createdBy: principal.id,
          createdAt: now,
          updatedAt: now,
        });
        await audited(tx, principal, 'create', null, created);
        return { endpoint: toEndpoint(created), secret };
      });
    },

    update(principal: Principal, scope: WebhookScope, id: string, body: UpdateWebhookBody): Promise<WebhookEndpoint> {
      if (body.url !== undefined) checkUrl(body.url);
      return inScope(principal, scope, async (tx) => {
        const endpoint = await endpointOf(tx, scope, id, true);
        const now = new Date();
        if (body.enabled === false && endpoint.enabled)
          await disableEndpoint(tx, id, { reason: 'manual', detail: `Disabled by ${principal.id}.` }, now);
        const updated = await updateEndpoint(tx, id, {
          ...(body.url === undefined ? {} : { url: body.url }),
          ...(body.events === undefined ? {} : { eventTypes: body.events }),
          ...(body.description === undefined ? {} : { description: body.description }),
          // Enabling starts afresh: no reason, no run of failures.
          ...(body.enabled === true && !endpoint.enabled
            ? { enabled: true, disabledReason: null, disabledAt: null, disabledDetail: null, failingSince: null }
            : {}),
        });
        await audited(tx, principal, 'update', endpoint, updated);
        return toEndpoint(updated);
      });
    },

    /** Removes an endpoint with its deliveries and their attempts. */
    remove(principal: Principal, scope: WebhookScope, id: string): Promise<WebhookEndpoint> {
      return inScope(principal, scope, async (tx) => {
        const endpoint = await endpointOf(tx, scope, id, true);
        await deleteEndpoint(tx, id);
        await audited(tx, principal, 'delete', endpoint, null);
        return toEndpoint(endpoint);
      });
    },

    /** A new secret (in this answer only); the one it replaces signs beside it for ROTATION_OVERLAP_MS. */
    rotateSecret(principal: Principal, scope: WebhookScope, id: string): Promise<WebhookEndpointWithSecret> {
      return inScope(principal, scope, async (tx) => {
        const endpoint = await endpointOf(tx, scope, id, true);
        const secret = newSigningSecret();
        const rotated = await updateEndpoint(tx, id, {
          secret,
          previousSecret: endpoint.secret,
          previousSecretExpiresAt: new Date(Date.now() + ROTATION_OVERLAP_MS),
        });
        await audited(tx, principal, 'rotate_secret', endpoint, rotated);
        return { endpoint: toEndpoint(rotated), secret };
      });
    },

    /**
     * Sends a `webhook.ping` now and answers how it went: the one call that connects to an
     * endpoint on request (also a disabled one: it is how a fix is checked). Tried once; its
     * outcome never changes the endpoint.
     */
    async test(principal: Principal, scope: WebhookScope, id: string) {
      const claimed = await inScope(principal, scope, async (tx) => {
        await endpointOf(tx, scope, id);
        const messageId = `ping_${randomUUID()}`;
        return insertLeasedPing(
          tx,
          {
            id: randomUUID(),
            endpointId: id,
            messageId,
            eventId: null,
            eventType: PING_TYPE,
            body: pingPayload(id, new Date()),
          },
          randomUUID(),
          sender.leaseMs,
        );
      });
      const { delivery, attempt } = await sender.attempt(claimed);
      if (!delivery) throw webhookNotFound();
      return { delivery: toDelivery(delivery), attempt: toAttempt(attempt) };
    },

    listDeliveries(principal: Principal, scope: WebhookScope, id: string, query: DeliveryListQuery) {
      const page = pageOf(query);
      return inScope(principal, scope, async (tx) => {
        await endpointOf(tx, scope, id);
        const found = await listDeliveries(tx, id, query.status, page);
        return { items: found.items.map(toDelivery), nextCursor: found.nextCursor };
      });
    },

    listAttempts(principal: Principal, scope: WebhookScope, id: string, deliveryId: string, query: AttemptListQuery) {
      const page = pageOf(query);
      return inScope(principal, scope, async (tx) => {
        await endpointOf(tx, scope, id);
        if (!(await findDelivery(tx, id, deliveryId))) throw deliveryNotFound();
        const found = await listAttempts(tx, deliveryId, page);
        return { items: found.items.map(toAttempt), nextCursor: found.nextCursor };
      });
    },

    /** Sends one delivery again, from the start of the retry schedule, with the same webhook-id. */
    replay(principal: Principal, scope: WebhookScope, id: string, deliveryId: string): Promise<WebhookDelivery> {
      return inScope(principal, scope, async (tx) => {
        const endpoint = await endpointOf(tx, scope, id, true);
        if (!endpoint.enabled) throw webhookDisabled();
        if (!(await findDelivery(tx, id, deliveryId))) throw deliveryNotFound();
        const replayed = await replayDelivery(tx, id, deliveryId);
        await notifySender(tx);
        return toDelivery(replayed);
      });
    },

    /** Sends again every failed delivery created since a time. */
    replayFailed(principal: Principal, scope: WebhookScope, id: string, body: ReplayFailedBody) {
      return inScope(principal, scope, async (tx) => {
        const endpoint = await endpointOf(tx, scope, id, true);
        if (!endpoint.enabled) throw webhookDisabled();
        const replayed = await replayFailedSince(tx, id, new Date(body.since));
        if (replayed > 0) await notifySender(tx);
        return { replayed };
      });
    },
  };
}

export type WebhookAdmin = ReturnType<typeof createWebhookAdmin>;
