import { type ObjectOptions, type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';

/** Conventions shared by every route (DESIGN.md §4). */

export const ErrorDetail = Type.Object(
  {
    path: Type.String({ description: 'JSON pointer of the offending field, e.g. `/quantity`', examples: ['/quantity'] }),
    message: Type.String({ examples: ['must be integer'] }),
  },
  { additionalProperties: false },
);

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object(
      {
        code: Type.String({
          description: 'Stable snake_case identifier, listed in docs/errors.md',
          examples: ['validation_failed'],
        }),
        message: Type.String({ description: 'A human sentence', examples: ['The request is not valid.'] }),
        details: Type.Optional(Type.Array(ErrorDetail)),
        requestId: Type.Optional(Type.String({ description: 'The x-request-id of the failed request' })),
      },
      { additionalProperties: false },
    ),
  },
  { title: 'Error', additionalProperties: false },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** Status codes the error envelope is used with, and what each means (for OpenAPI descriptions). */
export const ERROR_STATUS_DESCRIPTIONS = {
  400: 'Invalid request: validation failed, malformed JSON, or a bad cursor',
  401: 'Missing, malformed, expired or forged credentials',
  403: 'Authenticated, but not allowed',
  404: 'Unknown resource or route',
  408: 'The request was too slow',
  409: 'State conflict',
  413: 'Body too large',
  414: 'A path parameter is too long',
  415: 'Unsupported content type',
  422: 'Idempotency key reused with another body',
  429: 'Rate limited; see Retry-After',
  500: 'Internal error (details are in the server log under the request id)',
  503: 'Not ready or overloaded',
} as const;
export type ErrorStatus = keyof typeof ERROR_STATUS_DESCRIPTIONS;

/** `{ 404: ErrorEnvelope, ... }` for a route's response schema, each with its description. */
export function errorResponses(...statuses: ErrorStatus[]): Record<number, TSchema> {
  return Object.fromEntries(
    statuses.map((status) => [status, Type.Unsafe<ErrorEnvelope>({ ...ErrorEnvelope, description: ERROR_STATUS_DESCRIPTIONS[status] })]),
  );
}

/** The success envelope `{ success: true, data }`. */
export function Envelope<T extends TSchema>(data: T, options: ObjectOptions = {}) {
  return Type.Object({ success: Type.Literal(true), data }, { additionalProperties: false, ...options });
}

/** A request body object: unknown fields are rejected, not stripped. */
export function StrictObject<T extends TProperties>(properties: T, options: ObjectOptions = {}): TObject<T> {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

export const Id = Type.String({ minLength: 1, maxLength: 128, description: 'An opaque identifier' });

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601, UTC', examples: ['2026-11-22T10:00:00.000Z'] });

export const Cursor = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'Opaque: the `nextCursor` of the previous page',
});

/** `limit` and `cursor` of a paginated list (DESIGN.md §4: default 50, max 200 unless stated). */
export function PageQuery<T extends TProperties>(filters: T, limits = { default: 50, maximum: 200 }) {
  return Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: limits.maximum, default: limits.default })),
      cursor: Type.Optional(Cursor),
      ...filters,
    },
    { additionalProperties: false },
  );
}

/** A page of a list: `{ success: true, data: [...], nextCursor }`; nextCursor is null on the last page. */
export function Page<T extends TSchema>(item: T) {
  return Type.Object(
    {
      success: Type.Literal(true),
      data: Type.Array(item),
      nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
    },
    { additionalProperties: false },
  );
}

export const NullableString = (options: { maxLength?: number; description?: string; format?: string; pattern?: string } = {}) =>
  Type.Union([Type.String(options), Type.Null()]);
