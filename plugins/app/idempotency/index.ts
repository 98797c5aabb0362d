import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type ErrorEnvelope, errorResponses } from '../../../schemas/common.js';
import { callerOf } from '../auth.js';
import type { Database } from '../db.js';
import { AppError, ConflictError, toErrorResponse } from '../errors.js';
import { findStoredResponse, type KeyScope, storeResponse, tryLockKey } from './repository.js';

/**
 * Idempotency keys with Stripe's semantics. A route opts in with `config: { idempotent: true }`;
 * its OpenAPI description then documents the `Idempotency-Key` header. The first response to a
 * key (per caller and route) is stored for 24 hours, in the transaction of its effect, and
 * replayed with `Idempotent-Replayed: true`; the key with another request is 422; while the first
 * request runs, another with its key is 409. A request that fails validation never reaches the
 * handler and stores nothing; an internal failure rolls everything back and stores nothing.
 */

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** 1-255 printable ASCII characters, not starting or ending with a space. */
const IdempotencyHeaders = Type.Object({
  // Lower case: Fastify matches header schemas to Node's lower-cased names as written when a custom
  // validator compiler is set, as here.
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$',
      description:
        'Makes a retry safe: the first response to this key is stored for 24 hours and answered again (with `Idempotent-Replayed: true`) to every retry with the same request. Use a new random key (a UUID) per intended change.',
      examples: ['9f1c6a1e-8f0b-4c8e-9d57-3f3f4e0c2a11'],
    }),
  ),
});

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route accepts an Idempotency-Key header. */
    idempotent?: boolean;
  }
  interface FastifyInstance {
    /**
     * Runs a change in one transaction and sends its result with `statusCode`. On a route with
     * `config.idempotent` and a request carrying an Idempotency-Key, the response is stored with
     * the effect and replayed for the same key.
     *
     * `prepare`, when given, runs first and outside any transaction (a call to another service must
     * not hold a database connection while it waits); its result is handed to `work`. It is skipped
     * when the key already has a stored answer, and its errors are not stored, so a retry tries again.
     */
    runChange<T, P = undefined>(
      request: FastifyRequest,
      reply: FastifyReply,
      statusCode: number,
      work: (tx: Database, prepared: P) => Promise<T>,
      prepare?: () => Promise<P>,
    ): Promise<FastifyReply>;
  }
}

const keyInUse = () =>
  new ConflictError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry when it has finished.');
const keyReused = () =>
  new AppError(422, 'idempotency_key_reused', 'This Idempotency-Key was used with a different request; use a new key for a new request.');

/** JSON with every object's keys sorted: the same fields in another order are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, field]) => field !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, field]) => `${JSON.stringify(key)}:${canonicalJson(field)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What makes two requests the same: path parameters, query string and body, after validation. */
function requestHash(request: FastifyRequest): string {
  return createHash('sha256')
    .update(canonicalJson([request.params ?? null, request.query ?? null, request.body ?? null]))
    .digest('hex');
}

const withRequestId = (envelope: ErrorEnvelope, requestId: string): ErrorEnvelope => ({ ...envelope, error: { ...envelope.error, requestId } });

export default fp(
  async (fastify) => {
    fastify.addHook('onRoute', (route) => {
      if (!route.config?.idempotent) return;
      route.schema = {
        ...route.schema,
        headers: IdempotencyHeaders,
        response: { ...errorResponses(409, 422), ...(route.schema?.response as object | undefined) },
      };
    });

    fastify.decorate('runChange', async function runChange<T, P = undefined>(
      request: FastifyRequest,
      reply: FastifyReply,
      statusCode: number,
      work: (tx: Database, prepared: P) => Promise<T>,
      prepare?: () => Promise<P>,
    ): Promise<FastifyReply> {
      const key = request.routeOptions.config.idempotent ? request.headers['idempotency-key'] : undefined;
      if (typeof key !== 'string') {
        const prepared = (await prepare?.()) as P;
        return reply.code(statusCode).send(await fastify.db.transaction((tx) => work(tx, prepared)));
      }

      const scope: KeyScope = { userId: callerOf(request).id, route: `${request.method} ${request.routeOptions.url}`, key };
      const hash = requestHash(request);
      const retainedSince = () => new Date(Date.now() - IDEMPOTENCY_RETENTION_MS);
      let prepared: { value: P } | undefined;
      if (prepare && !(await findStoredResponse(fastify.db.orm, scope, retainedSince()))) prepared = { value: await prepare() };
      const outcome = await fastify.db.transaction(async (tx) => {
        if (!(await tryLockKey(tx, scope))) throw keyInUse();
        const now = new Date();
        const stored = await findStoredResponse(tx, scope, retainedSince());
        if (stored) {
          if (stored.requestHash !== hash) throw keyReused();
          return { replayed: true, statusCode: stored.statusCode, body: stored.response as unknown };
        }
        // The stored answer seen before preparing expired in between (a moment at the edge of retention): retry.
        if (prepare && !prepared) throw keyInUse();
        let result: { statusCode: number; body: unknown; error?: AppError };
        try {
          // A savepoint: a refused change (409 insufficient_funds ...) leaves nothing behind but its stored answer.
          result = { statusCode, body: await tx.transaction((savepoint) => work(savepoint as unknown as Database, prepared?.value as P)) };
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          const response = toErrorResponse(error);
          result = { statusCode: response.statusCode, body: response.body, error };
        }
        await storeResponse(tx, { ...scope, requestHash: hash, statusCode: result.statusCode, response: result.body, createdAt: now });
        return { replayed: false, ...result };
      });
      if ('error' in outcome && outcome.error) throw outcome.error;
      if (!outcome.replayed) return reply.code(outcome.statusCode).send(outcome.body);
      reply.header('idempotent-replayed', 'true');
      // A replayed error names this request, so its logs can be found.
      const body = outcome.statusCode >= 400 ? withRequestId(outcome.body as ErrorEnvelope, request.id) : outcome.body;
      return reply.code(outcome.statusCode).send(body);
    });
  },
  { name: 'idempotency', dependencies: ['db'] },
);
