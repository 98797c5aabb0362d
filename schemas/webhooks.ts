import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import {
  Envelope,
  Id,
  Int,
  Nullable,
  NullableString,
  Page,
  PageQuery,
  StrictObject,
  Text,
  Timestamp,
  trimmed,
} from './common.js';
import {
  LEDGER_KINDS,
  LedgerKind,
  RARITIES,
  Rarity,
  WebhookAttemptOutcome,
  WebhookDeliveryStatus,
  WebhookDisabledReason,
} from './enums.js';
import { EVENT_DATA, EVENT_TYPES, type EventType } from './events.js';

/**
 * Outbound webhooks: endpoints that teams (owners) and platform admins register, the deliveries
 * of the event log's events to them, each delivery's attempts, and the payloads they receive.
 */

/** The type of the test ping (`POST .../test`): not an event of the log. */
export const PING_TYPE = 'webhook.ping';

export const WebhookEventType = Type.Unsafe<EventType>({
  type: 'string',
  enum: [...EVENT_TYPES],
  $id: 'WebhookEventType',
  description: 'An event type of the event log; docs/webhooks.md describes each payload',
});

export const WEBHOOK_URL_MAX = 2048;

const WebhookUrl = Text(WEBHOOK_URL_MAX, {
  minLength: 1,
  description:
    'Where deliveries are POSTed: `https://` (plain `http://` only to a loopback host where private targets are allowed, in development). A host that is a literal loopback, private, link-local or metadata address is refused.',
  examples: ['https://hooks.example.com/pack-service'],
});

const EventTypes = Type.Array(Type.Ref(WebhookEventType), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types this endpoint receives',
});

const WebhookDescription = trimmed(Text(500, { description: 'What the endpoint is for (shown to its admins only)' }));

export const CreateWebhookBody = StrictObject(
  {
    url: WebhookUrl,
    events: EventTypes,
    description: Type.Optional(WebhookDescription),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { $id: 'CreateWebhookBody', description: 'Registering connects nowhere: `POST .../test` sends a ping.' },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = StrictObject(
  {
    url: Type.Optional(WebhookUrl),
    events: Type.Optional(EventTypes),
    description: Type.Optional(WebhookDescription),
    enabled: Type.Optional(
      Type.Boolean({
        description:
          '`false` turns the endpoint off (its pending deliveries fail); `true` turns it back on after any disabling and clears the reason',
      }),
    ),
  },
  { $id: 'UpdateWebhookBody', minProperties: 1 },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const WebhookEndpoint = Type.Object(
  {
    id: Id,
    teamId: Nullable(Id),
    url: Text(WEBHOOK_URL_MAX),
    description: Text(500),
    events: Type.Array(Type.Ref(WebhookEventType), { maxItems: EVENT_TYPES.length }),
    enabled: Type.Boolean(),
    disabledReason: Nullable(Type.Ref(WebhookDisabledReason)),
    disabledAt: Nullable(Timestamp),
    disabledDetail: NullableString(500, { description: 'What happened, in a sentence (null while enabled)' }),
    failingSince: Nullable(Timestamp),
    previousSecretExpiresAt: Nullable({
      ...Timestamp,
      description: 'Until then the secret replaced by the last rotation still signs beside the current one',
    }),
    createdBy: Id,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  {
    $id: 'WebhookEndpoint',
    additionalProperties: false,
    description:
      'An endpoint: a team’s (teamId set; it receives that team’s events only) or the platform’s (teamId null; every event). `failingSince`: the first failed attempt of the current run of failures (null after a success); 5 days of failures disable it.',
  },
);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = Type.Object(
  {
    endpoint: Type.Ref(WebhookEndpoint),
    secret: Text(100, {
      pattern: '^whsec_',
      description:
        'The signing secret (`whsec_` + base64). Shown in this answer only: store it now. Verify deliveries with it (docs/webhooks.md).',
    }),
  },
  { $id: 'WebhookEndpointWithSecret', additionalProperties: false },
);
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

export const WebhookDelivery = Type.Object(
  {
    id: Id,
    endpointId: Id,
    webhookId: Text(128, { description: 'The `webhook-id` header: the event id (the same on every attempt)' }),
    eventId: NullableString(20, { description: 'The event of the log (null for a test ping)' }),
    type: Text(64, { description: 'The event type, or `webhook.ping`' }),
    status: Type.Ref(WebhookDeliveryStatus),
    attempts: Int({ description: 'Attempts since it was created or last replayed' }),
    nextAttemptAt: Nullable(Timestamp),
    lastStatusCode: Nullable(Int({ maximum: 999 })),
    lastError: NullableString(500),
    createdAt: Timestamp,
    deliveredAt: Nullable(Timestamp),
  },
  { $id: 'WebhookDelivery', additionalProperties: false },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookAttempt = Type.Object(
  {
    id: Id,
    deliveryId: Id,
    attemptedAt: Timestamp,
    outcome: Type.Ref(WebhookAttemptOutcome),
    statusCode: Nullable(Int({ maximum: 999 })),
    error: NullableString(500),
    durationMs: Int(),
    address: NullableString(64, {
      description:
        'The address connected to after the SSRF check (or the one refused); null when the name did not resolve',
    }),
    responseBody: NullableString(1024, { description: 'The start of the answer’s body (at most 1 KiB), if any' }),
  },
  { $id: 'WebhookAttempt', additionalProperties: false },
);
export type WebhookAttempt = Static<typeof WebhookAttempt>;

export const TeamWebhookParams = Type.Object({ teamId: Id, id: Id }, { additionalProperties: false });
export const TeamDeliveryParams = Type.Object({ teamId: Id, id: Id, deliveryId: Id }, { additionalProperties: false });
export const WebhookParams = Type.Object({ id: Id }, { additionalProperties: false });
export const DeliveryParams = Type.Object({ id: Id, deliveryId: Id }, { additionalProperties: false });

export const WebhookListQuery = PageQuery({});
export type WebhookListQuery = Static<typeof WebhookListQuery>;
export const DeliveryListQuery = PageQuery({ status: Type.Optional(Type.Ref(WebhookDeliveryStatus)) });
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;
export const AttemptListQuery = PageQuery({});
export type AttemptListQuery = Static<typeof AttemptListQuery>;

export const ReplayFailedBody = StrictObject({
  since: { ...Timestamp, description: 'Replays the failed deliveries created at or after this time' },
});
export type ReplayFailedBody = Static<typeof ReplayFailedBody>;

export const WebhookResponse = Envelope(Type.Ref(WebhookEndpoint));
export const WebhookSecretResponse = Envelope(Type.Ref(WebhookEndpointWithSecret));
export const WebhookPage = Page(Type.Ref(WebhookEndpoint));
export const DeliveryResponse = Envelope(Type.Ref(WebhookDelivery));
export const DeliveryPage = Page(Type.Ref(WebhookDelivery));
export const AttemptPage = Page(Type.Ref(WebhookAttempt));
export const TestResultResponse = Envelope(
  Type.Object(
    { delivery: Type.Ref(WebhookDelivery), attempt: Type.Ref(WebhookAttempt) },
    { additionalProperties: false },
  ),
);
export const ReplayFailedResponse = Envelope(
  Type.Object({ replayed: Int({ description: 'Deliveries set to be sent again' }) }, { additionalProperties: false }),
);

// The payloads endpoints receive: `{ type, timestamp, data }` (Standard Webhooks).

/** What every payload's data says besides the event's own fields. */
const PAYLOAD_CONTEXT = {
  teamId: Nullable(Id),
  userId: Nullable({ ...Id, description: 'The fan the event concerns, if any' }),
  subject: { ...Id, description: 'The id the event is about (a purchase, an owned pack, a ledger entry ...)' },
};

export const WebhookThinnedData = Type.Object(
  { ...PAYLOAD_CONTEXT, truncated: Type.Literal(true) },
  {
    $id: 'WebhookThinnedData',
    additionalProperties: false,
    description: 'The data of a payload that would pass 20 KB: its ids only; read the rest from the API',
  },
);

const pascal = (type: string) =>
  type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/** The enumerations event data names, by their values. */
const NAMED_ENUMS: [readonly string[], TSchema][] = [
  [RARITIES, Rarity],
  [LEDGER_KINDS, LedgerKind],
];

/**
 * The event data schemas spell enumerations as unions of literals (the append's compiled check
 * needs them so); in the document they are the named enums (Rarity ...) or a JSON Schema `enum`.
 */
function withNamedEnums(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withNamedEnums);
  if (!schema || typeof schema !== 'object') return schema;
  const branches = (schema as { anyOf?: unknown }).anyOf;
  if (Array.isArray(branches) && branches.length > 0 && branches.every((branch) => branch && 'const' in branch)) {
    const values = branches.map((branch: { const: string }) => branch.const);
    const named = NAMED_ENUMS.find(([list]) => list.length === values.length && list.every((v, i) => v === values[i]));
    return named ? Type.Ref(named[1]) : { type: 'string', enum: values };
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withNamedEnums(value)]));
}

function payloadSchema(type: string, data: TObject, description: string | undefined) {
  return Type.Object(
    {
      type: Type.Literal(type),
      timestamp: { ...Timestamp, description: 'When the event happened' },
      data: Type.Union([data, Type.Ref(WebhookThinnedData)]),
    },
    { $id: `Webhook${pascal(type)}`, additionalProperties: false, description },
  );
}

/** The payload of each event type, named `Webhook<Type>` (WebhookPackOpened ...). */
export const WEBHOOK_PAYLOADS: Record<string, TObject> = Object.fromEntries(
  Object.entries(EVENT_DATA).map(([type, data]) => [
    type,
    withNamedEnums(
      payloadSchema(
        type,
        Type.Object({ ...PAYLOAD_CONTEXT, ...data.properties }, { additionalProperties: false }),
        data.description,
      ),
    ) as TObject,
  ]),
);

export const WebhookPing = Type.Object(
  {
    type: Type.Literal(PING_TYPE),
    timestamp: Timestamp,
    data: Type.Object(
      { endpointId: Id, message: Text(200) },
      { additionalProperties: false, description: 'Sent by `POST .../test` only' },
    ),
  },
  { $id: 'WebhookPing', additionalProperties: false, description: 'The test ping' },
);
WEBHOOK_PAYLOADS[PING_TYPE] = WebhookPing;

const header = (name: string, description: string, maxLength: number) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string', maxLength },
});

/**
 * The OpenAPI 3.1 `webhooks` of the document: one POST per payload type, as an endpoint receives
 * it (the headers of Standard Webhooks, the body's named schema, what its answers mean).
 */
export function webhookOperations(): Record<string, { post: Record<string, unknown> }> {
  return Object.fromEntries(
    Object.entries(WEBHOOK_PAYLOADS).map(([type, schema]) => [
      type,
      {
        post: {
          tags: ['Webhooks'],
          summary: `${type} delivered to a registered endpoint`,
          description: `${schema.description ?? ''}. Verify the signature before trusting the body (docs/webhooks.md); dedupe by \`webhook-id\`: a delivery may come more than once.`,
          operationId: `webhook${pascal(type)}`,
          parameters: [
            header('webhook-id', 'The event id: the same on every attempt and replay', 128),
            header('webhook-timestamp', 'Unix seconds of this attempt; refuse one far from your clock', 20),
            header(
              'webhook-signature',
              'Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per active secret',
              400,
            ),
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema.$id}` } } },
          },
          responses: {
            '200': { description: 'Received: any 2xx answer counts as delivered' },
            '410': { description: 'Gone: the endpoint is disabled at once, no retry' },
            default: { description: 'Any other answer, a redirect or no answer in 15 s: retried with backoff' },
          },
        },
      },
    ]),
  );
}
