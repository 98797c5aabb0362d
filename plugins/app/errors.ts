import type { FastifyError, FastifyReply } from 'fastify';
import type { ErrorEnvelope } from '../../schemas/common.js';

/**
 * The error model: typed domain errors, and the one place where every failure, ours or Fastify's
 * or a plugin's, becomes the error envelope with the right status code (toErrorResponse,
 * sendError). The Fastify handlers and the plugin that install it are in error-handler.ts.
 */

export type ErrorDetail = { path: string; message: string };

/** A failure the caller can act on. `code` is stable and documented in docs/errors.md. */
export class AppError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;

  constructor(
    statusCode: number,
    code: string,
    message: string,
    options: { details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.statusCode = statusCode;
    this.code = code;
    this.details = options.details;
    this.headers = options.headers;
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details?: ErrorDetail[], code = 'validation_failed') {
    super(400, code, message, { details });
  }
}

export class UnauthorizedError extends AppError {
  constructor(code: 'missing_credentials' | 'invalid_token' | 'token_expired', message: string) {
    // RFC 6750: a request without credentials gets no error attribute; a bad token gets invalid_token.
    const challenge =
      code === 'missing_credentials'
        ? 'Bearer realm="api"'
        : `Bearer realm="api", error="invalid_token", error_description="${message.replace(/"/g, "'")}"`;
    super(401, code, message, { headers: { 'www-authenticate': challenge } });
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'You are not allowed to do this.', code = 'forbidden') {
    super(403, code, message);
  }
}

export class NotFoundError extends AppError {
  constructor(code: string, message: string) {
    super(404, code, message);
  }
}

export class ConflictError extends AppError {
  constructor(code: string, message: string, details?: ErrorDetail[]) {
    super(409, code, message, { details });
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(code: string, message: string, retryAfterSeconds?: number) {
    super(503, code, message, {
      headers: retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

/** The instance has more work than it can answer in time: the caller should retry, here or elsewhere. */
export function overloadedError(retryAfterSeconds: number): ServiceUnavailableError {
  return new ServiceUnavailableError('overloaded', 'The service is overloaded; try again shortly.', retryAfterSeconds);
}

/** RFC 6749 §5.2 error codes, as the OAuth endpoints (token, revoke) answer them. */
export type OAuthErrorCode = 'invalid_request' | 'invalid_grant' | 'unsupported_grant_type';

/**
 * A failure of an OAuth endpoint, answered as RFC 6749 defines it (`{ error, error_description }`)
 * rather than in the error envelope, so OAuth client libraries understand it.
 */
export class OAuthError extends AppError {
  constructor(code: OAuthErrorCode, description: string, statusCode = 400) {
    super(statusCode, code, description);
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An OAuth endpoint: its 400s are RFC 6749 error bodies (validation failures are `invalid_request`). */
    oauth?: boolean;
  }
}

/** Enough to fix a request; a response listing thousands of problems helps nobody. */
export const MAX_DETAILS = 20;

type AjvError = { instancePath?: string; message?: string; keyword?: string; params?: Record<string, unknown> };

/** Ajv errors as `{ path, message }`, with the path naming the field even for required/unknown fields. */
export function validationDetails(errors: AjvError[], part: string | undefined): ErrorDetail[] {
  const prefix = part && part !== 'body' ? `/${part}` : '';
  // An `if` error only says which `then` failed, and a discriminator error repeats what the tag's
  // own enum or required error says: the errors that name the field are enough.
  return errors
    .filter((error) => error.keyword !== 'if' && error.keyword !== 'discriminator')
    .map((error) => {
      let path = error.instancePath ?? '';
      let message = error.message ?? 'is invalid';
      if (error.keyword === 'enum' && Array.isArray(error.params?.allowedValues)) {
        message = `must be one of: ${error.params.allowedValues.join(', ')}`;
      } else if (error.keyword === 'required' && typeof error.params?.missingProperty === 'string') {
        path += `/${error.params.missingProperty}`;
        message = 'is required';
      } else if (error.keyword === 'additionalProperties' && typeof error.params?.additionalProperty === 'string') {
        path += `/${error.params.additionalProperty}`;
        message = 'is not an accepted field';
      } else if (error.keyword === 'false schema') {
        // A conditional rule forbids the field in this combination (e.g. quantity with action publish).
        message = 'is not accepted in this combination; see the operation description';
      }
      return { path: (`${prefix}${path}` || '/').slice(0, 512), message };
    });
}

/** Fastify and plugin error codes that are the caller's fault, with our status and code. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    message: 'The request body must be sent as application/json.',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'The request body is too large.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'bad_request',
    message: 'The Content-Length header does not match the body.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'invalid_json',
    message: 'The body is empty but the content type is application/json.',
  },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', message: 'The body is not valid JSON.' },
  FST_ERR_BAD_URL: { status: 400, code: 'bad_request', message: 'The URL is not valid.' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'uri_too_long', message: 'A path parameter is too long.' },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, code: 'bad_request', message: 'The request could not be routed.' },
};

export interface ErrorResponse {
  statusCode: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
  /** Whether the failure is ours (logged as an error) rather than the caller's. */
  internal: boolean;
}

/** Maps any thrown value to the status, headers and envelope the caller gets. Pure. */
export function toErrorResponse(thrown: unknown, requestId?: string): ErrorResponse {
  // `throw null` or a rejection with undefined is still a 500 in the envelope.
  const error = thrown ?? new Error('a null or undefined value was thrown');
  const envelope = (code: string, message: string, details?: ErrorDetail[]): ErrorEnvelope => ({
    success: false,
    error: { code, message, ...(details ? { details } : {}), ...(requestId ? { requestId } : {}) },
  });

  // Drizzle wraps what the pool refused with (an overload) in its own query error.
  const appError = appErrorWithin(error);
  if (appError) {
    return {
      statusCode: appError.statusCode,
      body: envelope(appError.code, appError.message, appError.details),
      headers: appError.headers ?? {},
      internal: false,
    };
  }
  const fastifyError = error as Partial<FastifyError> & { validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    const details = validationDetails(fastifyError.validation as AjvError[], fastifyError.validationContext);
    const message =
      details.length > MAX_DETAILS
        ? `The request is not valid: ${details.length} problems, the first ${MAX_DETAILS} listed.`
        : 'The request is not valid.';
    return {
      statusCode: 400,
      body: envelope('validation_failed', message, details.slice(0, MAX_DETAILS)),
      headers: {},
      internal: false,
    };
  }

  const known = fastifyError.code ? FRAMEWORK_ERRORS[fastifyError.code] : undefined;
  if (known) {
    return { statusCode: known.status, body: envelope(known.code, known.message), headers: {}, internal: false };
  }

  const status = fastifyError.statusCode ?? 500;
  if (status === 429) {
    return {
      statusCode: 429,
      body: envelope('rate_limited', fastifyError.message || 'Too many requests; slow down.'),
      headers: {},
      internal: false,
    };
  }
  if (status === 503) {
    return {
      statusCode: 503,
      body: envelope('service_unavailable', 'The service is overloaded; try again shortly.'),
      headers: { 'retry-after': '5' },
      internal: false,
    };
  }
  if (isDatabaseUnavailable(error)) {
    // Logged with its stack like an internal error, but the caller can act on it: retry.
    return {
      statusCode: 503,
      body: envelope('database_unavailable', 'The database is busy or unreachable; retry shortly.'),
      headers: { 'retry-after': '2' },
      internal: true,
    };
  }
  if (status >= 400 && status < 500) {
    // Another plugin's client error: keep its status, never leak its internals.
    const code = status === 404 ? 'not_found' : status === 408 ? 'request_timeout' : 'bad_request';
    return {
      statusCode: status,
      body: envelope(code, safeMessage(fastifyError.message)),
      headers: {},
      internal: false,
    };
  }
  return {
    statusCode: 500,
    body: envelope('internal_error', 'Something went wrong on our side. The request id helps us find it.'),
    headers: {},
    internal: true,
  };
}

/**
 * SQLSTATE classes and codes that say the database could not do the work now, not that the
 * request or the code is wrong: connection failures (08), insufficient resources (53), operator
 * intervention such as a terminated session or a statement timeout (57), lock and serialization
 * conflicts that outlasted their retries (40001, 40P01, 55P03), an idle transaction cut off
 * (25P03). Drizzle wraps the driver's error: its code is on `cause`.
 */
const UNAVAILABLE_SQLSTATE = /^(08|53|57)|^(40001|40P01|55P03|25P03)$/;
/** Errors of the pg driver itself: no connection within the pool's wait, a query past its read timeout, a dropped socket. */
const UNAVAILABLE_DRIVER_MESSAGE =
  /timeout exceeded when trying to connect|Query read timeout|Connection terminated|is not queryable|ECONNREFUSED|ECONNRESET/;

/** The error itself when it is one of ours, or the one it wraps (at most two levels down). */
function appErrorWithin(error: unknown): AppError | undefined {
  for (let current = error as { cause?: unknown } | undefined, depth = 0; current && depth < 3; depth++) {
    if (current instanceof AppError) return current;
    current = current.cause as typeof current;
  }
  return undefined;
}

function isDatabaseUnavailable(error: unknown): boolean {
  for (
    let current = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    current && depth < 3;
    depth++
  ) {
    if (typeof current.code === 'string' && UNAVAILABLE_SQLSTATE.test(current.code)) return true;
    if (typeof current.message === 'string' && UNAVAILABLE_DRIVER_MESSAGE.test(current.message)) return true;
    current = current.cause as typeof current;
  }
  return false;
}

/** Client-error messages from plugins are short sentences; cap them and drop anything multi-line. */
function safeMessage(message: string | undefined): string {
  const firstLine = (message ?? '').split('\n')[0]?.slice(0, 200).trim();
  return firstLine || 'The request could not be processed.';
}

/** Sends the envelope for an error; used by the error handler and by plugins that answer early. */
export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const response = toErrorResponse(error, reply.request.id);
  if (reply.request.routeOptions?.config?.oauth && response.statusCode === 400) {
    // RFC 6749 §5.2: OAuth clients read `error`; the token endpoint's answers are never cached.
    const code = error instanceof OAuthError ? error.code : 'invalid_request';
    const description = error instanceof OAuthError ? error.message : response.body.error.message;
    return reply
      .code(400)
      .headers({ 'x-request-id': reply.request.id, 'cache-control': 'no-store', pragma: 'no-cache' })
      .send({ error: code, error_description: description });
  }
  // Routing errors answer before the onRequest hook that sets it: set it here too.
  reply.header('x-request-id', reply.request.id);
  if (response.internal) {
    reply.log.error({ err: error }, 'request failed');
  } else if (response.statusCode >= 500) {
    reply.log.warn({ err: error }, 'request refused');
  }
  return reply.code(response.statusCode).headers(response.headers).send(response.body);
}
