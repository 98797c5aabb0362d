import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import type { WebhookScope } from '../../../../plugins/app/webhooks/service.js';
import { errorResponses, Id } from '../../../../schemas/common.js';
import {
  AttemptListQuery,
  AttemptPage,
  CreateWebhookBody,
  DeliveryListQuery,
  DeliveryPage,
  DeliveryResponse,
  ReplayFailedBody,
  ReplayFailedResponse,
  TestResultResponse,
  UpdateWebhookBody,
  WebhookListQuery,
  WebhookPage,
  WebhookResponse,
  WebhookSecretResponse,
} from '../../../../schemas/webhooks.js';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/**
 * The webhook endpoints of one kind of scope, under the path prefix the caller registers them
 * at: a team's (`/api/admin/teams/{teamId}/webhooks`: its owners and platform admins) or the
 * platform's (`/api/admin/webhooks`: platform admins; its endpoints receive every team's events).
 */
export interface WebhookRouteScope {
  /** `''` (platform) or `/:teamId/webhooks` (team), before each route's own path. */
  base: string;
  /** The path parameters before the route's own: `{ teamId }` or none. */
  params: TObject;
  scopeOf(params: Record<string, string>): WebhookScope;
  /** In operation ids: `Team` or `Platform`. */
  name: 'Team' | 'Platform';
  who: string;
}

export function webhookRoutes(app: App, scope: WebhookRouteScope): void {
  const base = scope.base;
  const root = base || '/';
  // The platform's list and create take no path parameters.
  const rootParams = Object.keys(scope.params.properties).length > 0 ? { params: scope.params } : {};
  const withIds = (ids: Record<string, TSchema>) =>
    Type.Object({ ...scope.params.properties, ...ids }, { additionalProperties: false });
  const EndpointParams = withIds({ id: Id });
  const DeliveryParams = withIds({ id: Id, deliveryId: Id });
  const tags = ['Admin', 'Webhooks'];
  const config = { auth: 'user' as const };
  const target = (request: FastifyRequest) => {
    const params = request.params as Record<string, string>;
    return {
      caller: callerOf(request),
      scope: scope.scopeOf(params),
      id: params.id as string,
      deliveryId: params.deliveryId as string,
    };
  };
  const op = (verb: string, noun: string) => `${verb}${scope.name}${noun}`;

  app.get(
    root,
    {
      config,
      schema: {
        tags,
        summary: `${scope.name} webhook endpoints`,
        description: `For ${scope.who}. Newest first; paginated. Secrets are never listed.`,
        operationId: op('list', 'Webhooks'),
        ...rootParams,
        querystring: WebhookListQuery,
        response: { 200: WebhookPage, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { caller, scope: where } = target(request);
      const page = await app.webhooks.list(caller, where, request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.post(
    root,
    {
      config,
      schema: {
        tags,
        summary: `Register a ${scope.name.toLowerCase()} webhook endpoint`,
        description: `For ${scope.who}. Answers the signing secret, once: store it. Registering connects nowhere (\`POST .../test\` sends a ping). A URL that is not https, carries credentials, or whose host is a literal loopback, private, link-local or metadata address is 400 \`invalid_webhook_url\`.`,
        operationId: op('create', 'Webhook'),
        ...rootParams,
        body: Type.Ref(CreateWebhookBody),
        response: { 201: WebhookSecretResponse, ...errorResponses(400, 403, 404) },
      },
    },
    async (request, reply) => {
      const { caller, scope: where } = target(request);
      const created = await app.webhooks.create(caller, where, request.body);
      return reply.code(201).send({ success: true as const, data: created });
    },
  );

  app.get(
    `${base}/:id`,
    {
      config,
      schema: {
        tags,
        summary: 'A webhook endpoint',
        description: `For ${scope.who}. A disabled endpoint says why (\`disabledReason\`, \`disabledDetail\`).`,
        operationId: op('get', 'Webhook'),
        params: EndpointParams,
        response: { 200: WebhookResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { caller, scope: where, id } = target(request);
      return { success: true as const, data: await app.webhooks.get(caller, where, id) };
    },
  );

  app.patch(
    `${base}/:id`,
    {
      config,
      schema: {
        tags,
        summary: 'Change a webhook endpoint',
        description:
          'URL, event types, description; `enabled: false` turns it off (pending deliveries fail), `enabled: true` turns it back on and clears why it was disabled.',
        operationId: op('update', 'Webhook'),
        params: EndpointParams,
        body: Type.Ref(UpdateWebhookBody),
        response: { 200: WebhookResponse, ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => {
      const { caller, scope: where, id } = target(request);
      return { success: true as const, data: await app.webhooks.update(caller, where, id, request.body) };
    },
  );

  app.delete(
    `${base}/:id`,
    {
      config,
      schema: {
        tags,
        summary: 'Remove a webhook endpoint',
        description: 'Its deliveries and their attempts go with it. Answers the removed endpoint.',
        operationId: op('delete', 'Webhook'),
        params: EndpointParams,
        response: { 200: WebhookResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { caller, scope: where, id } = target(request);
      return { success: true as const, data: await app.webhooks.remove(caller, where, id) };
    },
  );

  app.post(
    `${base}/:id/rotate-secret`,
    {
      config,
      schema: {
        tags,
        summary: "Rotate a webhook endpoint's signing secret",
        description:
          'Answers the new secret, once. For 24 hours deliveries carry two signatures, by the new secret and the old one, so the receiver can switch without losing a delivery.',
        operationId: op('rotate', 'WebhookSecret'),
        params: EndpointParams,
        response: { 200: WebhookSecretResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { caller, scope: where, id } = target(request);
      return { success: true as const, data: await app.webhooks.rotateSecret(caller, where, id) };
    },
  );

  app.post(
    `${base}/:id/test`,
    {
      config,
      schema: {
        tags,
        summary: 'Send a test ping to a webhook endpoint',
        description:
          'Sends a `webhook.ping` now, signed like every delivery, and answers the delivery and its attempt (the call waits for it: up to 15 s). Also to a disabled endpoint; its outcome never changes the endpoint.',
        operationId: op('test', 'Webhook'),
        params: EndpointParams,
        response: { 200: TestResultResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { caller, scope: where, id } = target(request);
      return { success: true as const, data: await app.webhooks.test(caller, where, id) };
    },
  );

  app.get(
    `${base}/:id/deliveries`,
    {
      config,
      schema: {
        tags,
        summary: "A webhook endpoint's deliveries",
        description: 'Newest first; filter by `status`; paginated.',
        operationId: op('list', 'WebhookDeliveries'),
        params: EndpointParams,
        querystring: DeliveryListQuery,
        response: { 200: DeliveryPage, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { caller, scope: where, id } = target(request);
      const page = await app.webhooks.listDeliveries(caller, where, id, request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.get(
    `${base}/:id/deliveries/:deliveryId/attempts`,
    {
      config,
      schema: {
        tags,
        summary: "A delivery's attempts",
        description:
          'Newest first, with each one’s outcome, status code, error, duration, address and the start of the answer’s body; paginated.',
        operationId: op('list', 'WebhookAttempts'),
        params: DeliveryParams,
        querystring: AttemptListQuery,
        response: { 200: AttemptPage, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { caller, scope: where, id, deliveryId } = target(request);
      const page = await app.webhooks.listAttempts(caller, where, id, deliveryId, request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.post(
    `${base}/:id/deliveries/:deliveryId/replay`,
    {
      config,
      schema: {
        tags,
        summary: 'Replay a delivery',
        description:
          'Sends it again now, from the start of the retry schedule, with the same `webhook-id` (a receiver that already handled it may ignore it). 409 `webhook_disabled` while the endpoint is disabled.',
        operationId: op('replay', 'WebhookDelivery'),
        params: DeliveryParams,
        response: { 200: DeliveryResponse, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => {
      const { caller, scope: where, id, deliveryId } = target(request);
      return { success: true as const, data: await app.webhooks.replay(caller, where, id, deliveryId) };
    },
  );

  app.post(
    `${base}/:id/replay-failed`,
    {
      config,
      schema: {
        tags,
        summary: 'Replay the failed deliveries since a time',
        description:
          'Every `failed` delivery of the endpoint created at or after `since` is sent again. 409 `webhook_disabled` while the endpoint is disabled.',
        operationId: op('replayFailed', 'WebhookDeliveries'),
        params: EndpointParams,
        body: ReplayFailedBody,
        response: { 200: ReplayFailedResponse, ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (request) => {
      const { caller, scope: where, id } = target(request);
      return { success: true as const, data: await app.webhooks.replayFailed(caller, where, id, request.body) };
    },
  );
}
