import { ERROR_STATUS_DESCRIPTIONS, type ErrorStatus } from '../../schemas/common.js';
import { webhookOperations } from '../../schemas/webhooks.js';
import { CATALOG_CACHE_CONTROL, CATALOG_CACHE_TTL_MS } from './packs/catalog-cache.js';

/**
 * The last shaping of the OpenAPI document that @fastify/swagger generates from the routes
 * (its `transformObject`). Pure. What it adds is what routes cannot say one by one:
 * - the headers every response carries (X-Request-Id, the CORS origin; the rate-limit headers on every 2xx and 4xx
 *   of a rate-limited operation; Retry-After, WWW-Authenticate where they apply), as shared
 *   components.headers;
 * - one shared response per error status (components.responses), with an example of that status;
 *   operations reference them instead of repeating the error envelope (the rate-limit headers a
 *   shared 4xx lists are, like every OpenAPI header, not required: the probes, exempt from the
 *   rate limit, answer their 400 without them);
 * - the `mapping` of discriminated unions (Ajv, which validates the same schemas, refuses it);
 * - tags only for the groups that have operations;
 * - the outbound webhooks' payloads, as OpenAPI 3.1 `webhooks` (no route declares them).
 */

type Json = Record<string, unknown>;

interface Operation {
  tags?: string[];
  responses: Record<string, Json>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: {
    schemas?: Record<string, Json>;
    headers?: Record<string, Json>;
    responses?: Record<string, Json>;
  } & Json;
  tags?: { name: string }[];
  [key: string]: unknown;
}

const integer = (description: string) => ({
  description,
  schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 },
});
const text = (description: string, maxLength: number) => ({ description, schema: { type: 'string', maxLength } });

export const RESPONSE_HEADERS = {
  'Access-Control-Allow-Origin': text(
    'Sent when the request comes from a browser origin allowed by CORS_ORIGINS (in local development, any origin)',
    2048,
  ),
  'X-Request-Id': text(
    'The id of this request: the x-request-id sent with it when that is 1–128 safe characters, else generated',
    128,
  ),
  'X-RateLimit-Limit': integer('Requests allowed per window, per user (per IP address when anonymous)'),
  'X-RateLimit-Remaining': integer('Requests left in the current window'),
  'X-RateLimit-Reset': integer('Seconds until the window starts over'),
  'RateLimit-Policy': text(
    'The limits that apply (IETF draft-ietf-httpapi-ratelimit-headers), a structured-field list: `"default";q=300;w=60` is 300 requests per 60 seconds per caller; a 429 of a stricter limit of a route (purchases, sign-in) lists it after',
    256,
  ),
  RateLimit: text(
    'What is left of each limit (IETF draft-ietf-httpapi-ratelimit-headers): `"default";r=12;t=30` is 12 requests left, the window starting over in 30 seconds',
    256,
  ),
  'Retry-After': integer('Seconds to wait before retrying'),
  'Idempotent-Replayed': text(
    '`true` when the response is the stored answer to an earlier request with the same Idempotency-Key',
    8,
  ),
  'WWW-Authenticate': text('The bearer challenge (RFC 6750)', 300),
  ETag: text('A strong validator of the body: send it back in If-None-Match to get 304 while nothing changed', 64),
  'Cache-Control': text(
    `\`${CATALOG_CACHE_CONTROL}\`: caches may serve the response for up to ${CATALOG_CACHE_TTL_MS / 1000} seconds`,
    64,
  ),
} as const;
export type ResponseHeader = keyof typeof RESPONSE_HEADERS;

const RATE_LIMIT_HEADERS: ResponseHeader[] = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
];

const ERROR_RESPONSES: Record<ErrorStatus, { name: string; code: string; message: string }> = {
  400: { name: 'BadRequest', code: 'validation_failed', message: 'The request is not valid.' },
  401: { name: 'Unauthorized', code: 'invalid_token', message: 'The token is not valid.' },
  403: { name: 'Forbidden', code: 'forbidden', message: 'You are not allowed to do this.' },
  404: { name: 'NotFound', code: 'pack_not_found', message: 'No pack with this id.' },
  408: { name: 'RequestTimeout', code: 'request_timeout', message: 'The request took too long to arrive.' },
  409: {
    name: 'Conflict',
    code: 'invalid_transition',
    message: 'Cannot publish: the pack is active, and publish needs a pack that is draft.',
  },
  413: { name: 'PayloadTooLarge', code: 'payload_too_large', message: 'The request body is too large.' },
  414: { name: 'UriTooLong', code: 'uri_too_long', message: 'A path parameter is too long.' },
  415: {
    name: 'UnsupportedMediaType',
    code: 'unsupported_media_type',
    message: 'The request body must be sent as application/json.',
  },
  422: {
    name: 'UnprocessableContent',
    code: 'idempotency_key_reused',
    message: 'This Idempotency-Key was used with a different request; use a new key for a new request.',
  },
  429: {
    name: 'TooManyRequests',
    code: 'rate_limited',
    message: 'Too many requests: the limit is 300 per 1 minute. Retry after 42 s.',
  },
  500: {
    name: 'InternalError',
    code: 'internal_error',
    message: 'Something went wrong on our side. The request id helps us find it.',
  },
  502: {
    name: 'BadGateway',
    code: 'store_error',
    message: 'Google Play refused this service’s request; try again later.',
  },
  503: { name: 'ServiceUnavailable', code: 'overloaded', message: 'The service is overloaded; try again shortly.' },
};

/** What a success response without a description of its own is called. */
const SUCCESS_DESCRIPTIONS: Record<string, string> = { 200: 'OK', 201: 'Created', 204: 'No content' };

const headerRefs = (names: readonly ResponseHeader[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

function errorResponse(status: ErrorStatus): Json {
  const { code, message } = ERROR_RESPONSES[status];
  const headers: ResponseHeader[] = ['Access-Control-Allow-Origin', 'X-Request-Id'];
  if (status < 500) headers.push(...RATE_LIMIT_HEADERS);
  if (status === 429 || status === 503) headers.push('Retry-After');
  if (status === 401) headers.push('WWW-Authenticate');
  return {
    description: `${ERROR_STATUS_DESCRIPTIONS[status]}. The error envelope; its codes are listed in docs/errors.md.`,
    headers: headerRefs(headers),
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: {
          success: false,
          error: {
            code,
            message,
            ...(status === 400 ? { details: [{ path: '/quantity', message: 'must be integer' }] } : {}),
            requestId: '3f0c1d52-1a',
          },
        },
      },
    },
  };
}

/** Headers a route declared on a success response (ETag, Cache-Control), by their canonical name. */
function declaredHeaders(response: Json): ResponseHeader[] {
  const declared = Object.keys((response.headers as Json | undefined) ?? {});
  return (Object.keys(RESPONSE_HEADERS) as ResponseHeader[]).filter((name) =>
    declared.some((header) => header.toLowerCase() === name.toLowerCase()),
  );
}

export function shapeDocument(document: OpenApiDocument): OpenApiDocument {
  document.components ??= {};
  const components = document.components;
  const responses: Record<string, Json> = {};
  const usedTags = new Set<string>();
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      for (const tag of operation.tags ?? []) usedTags.add(tag);
      const rateLimited = '429' in operation.responses;
      for (const [status, response] of Object.entries(operation.responses)) {
        const code = Number(status) as ErrorStatus;
        const schemaRef = (
          (response.content as Json | undefined)?.['application/json'] as { schema?: { $ref?: string } } | undefined
        )?.schema?.$ref;
        if (code === 400 && schemaRef === '#/components/schemas/OAuthError') {
          // The OAuth endpoints answer their 400s as RFC 6749 defines, not in the envelope.
          responses.OAuthError ??= {
            description:
              'RFC 6749 §5.2 error: `invalid_request`, `invalid_grant`, `unsupported_grant_type` (see docs/authentication.md).',
            headers: headerRefs(['Access-Control-Allow-Origin', 'X-Request-Id', ...RATE_LIMIT_HEADERS]),
            content: {
              'application/json': {
                schema: { $ref: schemaRef },
                example: {
                  error: 'invalid_grant',
                  error_description: 'The refresh token is invalid, expired or revoked.',
                },
              },
            },
          };
          operation.responses[status] = { $ref: '#/components/responses/OAuthError' };
          continue;
        }
        if (code >= 400) {
          const shared = ERROR_RESPONSES[code];
          if (!shared) throw new Error(`${method.toUpperCase()} ${path}: no shared response for status ${code}`);
          responses[shared.name] ??= errorResponse(code);
          operation.responses[status] = { $ref: `#/components/responses/${shared.name}` };
          continue;
        }
        if (response.description === 'Default Response')
          response.description = SUCCESS_DESCRIPTIONS[status] ?? 'Success';
        response.headers = headerRefs([
          ...new Set<ResponseHeader>([
            'Access-Control-Allow-Origin',
            'X-Request-Id',
            ...(rateLimited ? RATE_LIMIT_HEADERS : []),
            ...declaredHeaders(response),
          ]),
        ]);
      }
    }
  }
  components.headers = { ...RESPONSE_HEADERS };
  components.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));

  for (const schema of Object.values(components.schemas ?? {})) {
    const discriminator = schema.discriminator as
      | { propertyName: string; mapping?: Record<string, string> }
      | undefined;
    if (!discriminator || !Array.isArray(schema.oneOf)) continue;
    discriminator.mapping = Object.fromEntries(
      (schema.oneOf as { $ref: string }[]).map(({ $ref }) => {
        const branch = components.schemas?.[$ref.split('/').pop() as string] as
          | { properties?: Record<string, { enum?: string[] }> }
          | undefined;
        const value = branch?.properties?.[discriminator.propertyName]?.enum?.[0];
        if (value === undefined) throw new Error(`${$ref} has no single value for ${discriminator.propertyName}`);
        return [value, $ref];
      }),
    );
  }

  document.webhooks = webhookOperations();
  if (document.tags) document.tags = document.tags.filter((tag) => usedTags.has(tag.name));
  return document;
}
