import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import {
  ErrorDetail as ErrorDetailSchema,
  ErrorEnvelope,
  type ErrorStatus,
  errorResponses,
} from '../../schemas/common.js';
import { NotFoundError, sendError } from './errors.js';

/**
 * Where failures meet Fastify: the error handler plugin, the 404 of unknown routes, Fastify's own
 * routing failures and the errors Node's HTTP parser raises before Fastify sees a request. What
 * each failure answers is decided in errors.ts.
 */

const CLIENT_ERRORS: Record<string, { status: number; reason: string; code: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: 'Request Timeout',
    code: 'request_timeout',
    message: 'The request took too long to arrive.',
  },
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    code: 'headers_too_large',
    message: 'The request headers are too large.',
  },
};

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (slow requests, oversized
 * headers): answered on the socket with the same envelope.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const known = (error.code && CLIENT_ERRORS[error.code]) || {
    status: 400,
    reason: 'Bad Request',
    code: 'bad_request',
    message: 'The request could not be parsed.',
  };
  // No Fastify request exists yet: the id is made here, for the header and the body alike.
  const requestId = randomUUID();
  const body = JSON.stringify({ success: false, error: { code: known.code, message: known.message, requestId } });
  socket.end(
    `HTTP/1.1 ${known.status} ${known.reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Fastify's own routing failures (bad URL encoding, over-long parameters) in the envelope. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  sendError(reply, error);
}

/** The 404 of unknown routes; app.ts installs it behind the rate limit. */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  sendError(
    reply,
    new NotFoundError('route_not_found', `No route ${request.method} ${request.url.split('?')[0]?.slice(0, 200)}.`),
  );
}

/**
 * Declares on every route the error responses any request can meet, so the OpenAPI document shows
 * them without each route repeating them: 400 everywhere (any URL can be badly encoded, and any
 * query string can hold a NUL), 414 for routes with path parameters, 413/415 for routes with a
 * body, 429 unless exempt from the rate limit, 500 and 503. Also refuses to start with a route
 * that has no tags or summary (hidden routes aside), so the document stays complete.
 */
function declareCommonErrors(route: RouteOptions): void {
  const schema = (route.schema ?? {}) as FastifySchema & { hide?: boolean; tags?: string[]; summary?: string };
  if (schema.hide) return;
  if (!schema.tags?.length || !schema.summary) {
    throw new Error(`Route ${route.method} ${route.url} needs schema.tags and schema.summary`);
  }
  const rateLimited = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit !== false;
  const statuses: ErrorStatus[] = [400, ...(rateLimited ? [429 as const] : []), 500, 503];
  if (schema.params) statuses.push(414);
  if (schema.body) statuses.push(413, 415);
  route.schema = {
    ...schema,
    response: { ...errorResponses(...statuses), ...(schema.response as object | undefined) },
  };
}

export default fp(
  async (fastify: FastifyInstance) => {
    // The envelope's schemas, referenced by every route's error responses (errorResponses).
    fastify.addSchema(ErrorDetailSchema);
    fastify.addSchema(ErrorEnvelope);
    fastify.addHook('onRoute', declareCommonErrors);
    fastify.setErrorHandler((error, _request, reply) => sendError(reply, error));
  },
  { name: 'errors' },
);
