import {
  type ObjectOptions,
  type SchemaOptions,
  type Static,
  type StringOptions,
  type TObject,
  type TProperties,
  type TSchema,
  type TUnsafe,
  Type,
} from '@sinclair/typebox';

/**
 * Conventions shared by every route. Schemas with an `$id` are registered once (schemas/index.ts)
 * and referenced with `Type.Ref`, so the OpenAPI document names them and generated clients get
 * named types. Every string has a maximum length, every array a maximum size and every integer
 * its bounds: they document what the API accepts and answers, and they bound what it reads.
 */

/** A string enumeration as JSON Schema `enum`, which Swagger UI and validation messages list. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

const INT32_MAX = 2_147_483_647;

/**
 * A reference to a named schema with a default. (A `default` beside `$ref` is dropped by the
 * OpenAPI generator; inside `allOf` it is kept, and validation applies it.)
 */
export const RefWithDefault = <T extends TSchema>(schema: T, value: Static<T>) =>
  Type.Unsafe<Static<T>>({ allOf: [Type.Ref(schema)], default: value });

/** A 32-bit integer (every integer column is a PostgreSQL `integer`), bounded. */
export const Int = (
  options: { minimum?: number; maximum?: number; description?: string; default?: number; examples?: number[] } = {},
) => Type.Integer({ format: 'int32', minimum: 0, maximum: INT32_MAX, ...options });

/** A bounded string. */
export const Text = (maxLength: number, options: StringOptions = {}) => Type.String({ maxLength, ...options });

export const Id = Type.String({ minLength: 1, maxLength: 128, description: 'An opaque identifier' });

export const Timestamp = Type.String({
  format: 'date-time',
  maxLength: 30,
  description: 'ISO-8601, UTC',
  examples: ['2026-11-22T10:00:00.000Z'],
});

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ErrorDetail = Type.Object(
  {
    path: Text(512, {
      description: 'JSON pointer of the offending value, e.g. `/quantity` or `/querystring/limit`',
      examples: ['/quantity'],
    }),
    message: Text(500, { examples: ['must be integer'] }),
  },
  { $id: 'ErrorDetail', additionalProperties: false },
);

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object(
      {
        code: Text(64, {
          pattern: '^[a-z][a-z0-9_]*$',
          description: 'Stable snake_case identifier, listed in docs/errors.md',
          examples: ['pack_not_found'],
        }),
        message: Text(1000, {
          description: 'A human sentence; it may change, `code` does not',
          examples: ['No pack with this id.'],
        }),
        details: Type.Optional(
          Type.Array(Type.Ref(ErrorDetail), { maxItems: 20, description: 'Validation problems, at most 20' }),
        ),
        requestId: Type.Optional(Text(128, { description: 'The x-request-id of the failed request' })),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'Error', additionalProperties: false, description: 'The error envelope of every failure' },
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
  422: 'The Idempotency-Key was used before with a different request',
  429: 'Rate limited; see Retry-After',
  500: 'Internal error (details are in the server log under the request id)',
  502: 'An outside service this call depends on refused the service’s request',
  503: 'Not ready, overloaded, shutting down, or the database is unavailable; see Retry-After',
} as const;
export type ErrorStatus = keyof typeof ERROR_STATUS_DESCRIPTIONS;

/** `{ 404: Error, ... }` for a route's response schema, each with its description. */
export function errorResponses(...statuses: ErrorStatus[]): Record<number, TSchema> {
  return Object.fromEntries(
    statuses.map((status) => [status, Type.Ref(ErrorEnvelope, { description: ERROR_STATUS_DESCRIPTIONS[status] })]),
  );
}

/**
 * A response schema that also names the headers the route sends with it (the OpenAPI document
 * describes them; serialization ignores the keyword).
 */
export function WithHeaders<T extends TSchema>(schema: T, headers: readonly string[], description?: string): T {
  return {
    ...schema,
    ...(description ? { description } : {}),
    headers: Object.fromEntries(headers.map((name) => [name, { type: 'string' }])),
  };
}

/** The success envelope `{ success: true, data }`. */
export function Envelope<T extends TSchema>(data: T, options: ObjectOptions = {}) {
  return Type.Object({ success: Type.Literal(true), data }, { additionalProperties: false, ...options });
}

/** A request body object: unknown fields are rejected, not stripped. */
export function StrictObject<T extends TProperties>(properties: T, options: ObjectOptions = {}): TObject<T> {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

export const Cursor = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'Opaque: the `nextCursor` of the previous page',
});

/** `limit` and `cursor` of a paginated list: default 50, max 200 unless stated. */
/** A page's size when the query names none, and the most one query may ask for. */
export const PAGE_LIMITS = { default: 50, maximum: 200 } as const;

export function PageQuery<T extends TProperties>(
  filters: T,
  limits: { default: number; maximum: number } = PAGE_LIMITS,
) {
  return Type.Object(
    {
      limit: Type.Optional(Int({ minimum: 1, maximum: limits.maximum, default: limits.default })),
      cursor: Type.Optional(Cursor),
      ...filters,
    },
    { additionalProperties: false },
  );
}

export const NextCursor = Nullable(Text(512, { description: 'null on the last page' }));

/** A page of a list: `{ success: true, data: [...], nextCursor }`; nextCursor is null on the last page. */
export function Page<T extends TSchema>(item: T, maxItems = 200) {
  return Type.Object(
    { success: Type.Literal(true), data: Type.Array(item, { maxItems }), nextCursor: NextCursor },
    { additionalProperties: false },
  );
}

export const NullableString = (maxLength: number, options: StringOptions = {}) => Nullable(Text(maxLength, options));

/** A name shown to people: trimmed by the service, at least one visible character. */
/**
 * Marks a string schema as free text people type (a name, a reason): the value a route's handler
 * sees has no white space at either end (plugins/app/free-text.ts trims it, once validated). A
 * symbol, so neither the validator nor the OpenAPI document sees it.
 */
export const FreeText = Symbol.for('pack-service.free-text');

/** A string schema marked as free text (see `FreeText`). */
export const trimmed = <T extends TSchema>(schema: T): T => Object.assign(schema, { [FreeText]: true });

/** A name: free text with something in it besides white space (stored trimmed). */
export const Name = (maxLength: number, examples: string[]) =>
  trimmed(Type.String({ minLength: 1, maxLength, pattern: '\\S', examples }));
export const Description = (examples: string[]) => Text(2000, { examples });
export const ImageUrl = (description: string) =>
  NullableString(2048, { format: 'uri', pattern: '^https?://', description });
