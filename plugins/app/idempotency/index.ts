import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type ErrorEnvelope, errorResponses } from '../../../schemas/common.js';
import { callerOf } from '../auth/index.js';
import { KeyedBatcher } from '../database/batcher.js';
import type { Database } from '../database/index.js';
import { AppError, overloadedError, toErrorResponse } from '../errors.js';
import { keyInUse, keyReused } from './errors.js';
import {
  findStoredResponse,
  deleteExpiredResponses,
  findStoredResponses,
  type KeyScope,
  scopeKey,
  storeResponse,
  storeResponses,
  tryLockKey,
  tryLockKeys,
} from './repository.js';

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

/** A change many requests share one transaction for: see `batchedChange`. */
export interface BatchedChangeOptions<In, Out> {
  /** The most requests one transaction serves. */
  maxBatch: number;
  /**
   * One batch in its transaction, for requests that share `key` (the lock they serialize on):
   * answers, in order, each input's result or the AppError it is refused with. A refused input
   * must leave nothing written.
   */
  work: (tx: Database, key: string, inputs: In[]) => Promise<(Out | AppError)[]>;
}

export interface BatchedChange<In> {
  /**
   * Runs this request's change in the next batch of `key` and answers its outcome (its result as
   * `{ success, data }` with `statusCode`, for `reply.sendOutcome`). The Idempotency-Key of a
   * route with `config.idempotent` keeps its meaning: stored with the effect, replayed, 422 for
   * another request, 409 while the first one runs (a second request with the key in the same
   * batch included). Refused at once with 503 `overloaded`
   * when the batches queued for `key` and the pool's queue would keep it waiting past
   * DATABASE_QUEUE_LIMIT, and later if it waited that long all the same and a batch starting
   * leaves it queued behind.
   */
  run(request: FastifyRequest, statusCode: number, key: string, input: In): Promise<ChangeOutcome>;
}

export interface IdempotencyService {
  /** Forgets up to `limit` stored responses past their 24 hours' retention; answers how many. */
  forgetExpired(limit: number): Promise<number>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route accepts an Idempotency-Key header. */
    idempotent?: boolean;
  }
  interface FastifyInstance {
    idempotency: IdempotencyService;
    /**
     * Group commit: the requests for one key (a pack) that arrive while its transaction runs are
     * served together by the next one, which takes the key's lock once and answers each request
     * with its own result or its own error.
     */
    batchedChange<In, Out>(options: BatchedChangeOptions<In, Out>): BatchedChange<In>;
    /**
     * Runs a change in one transaction and answers its outcome: its result with `statusCode`, for
     * `reply.sendOutcome`. On a route with `config.idempotent` and a request carrying an
     * Idempotency-Key, the outcome is stored with the effect and replayed for the same key. A
     * refusal (an AppError) is thrown, as from any handler, once stored.
     *
     * `prepare`, when given, runs first and outside any transaction (a call to another service must
     * not hold a database connection while it waits); its result is handed to `work`. It is skipped
     * when the key already has a stored answer, and its errors are not stored, so a retry tries again.
     */
    idempotentChange<T, P = undefined>(
      request: FastifyRequest,
      statusCode: number,
      work: (tx: Database, prepared: P) => Promise<T>,
      prepare?: () => Promise<P>,
    ): Promise<ChangeOutcome>;
  }
  interface FastifyReply {
    /** Sends a change's outcome; a replayed one says so (`Idempotent-Replayed: true`) and names this request in an error. */
    sendOutcome(outcome: ChangeOutcome): FastifyReply;
  }
}

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

const withRequestId = (envelope: ErrorEnvelope, requestId: string): ErrorEnvelope => ({
  ...envelope,
  error: { ...envelope.error, requestId },
});

/** The request's Idempotency-Key with what it is scoped to, on a route that accepts one. */
function keyedRequest(request: FastifyRequest): { scope: KeyScope; hash: string } | undefined {
  const key = request.routeOptions.config.idempotent ? request.headers['idempotency-key'] : undefined;
  if (typeof key !== 'string') return undefined;
  return {
    scope: { userId: callerOf(request).id, route: `${request.method} ${request.routeOptions.url}`, key },
    hash: requestHash(request),
  };
}

const retainedSince = () => new Date(Date.now() - IDEMPOTENCY_RETENTION_MS);

/** What a change answers: its status and body, and whether it is a stored answer replayed. */
export interface ChangeOutcome {
  statusCode: number;
  body: unknown;
  replayed: boolean;
}

/** Sends an outcome; a replayed error names this request, so its logs can be found. */
function sendOutcome(request: FastifyRequest, reply: FastifyReply, outcome: ChangeOutcome): FastifyReply {
  if (!outcome.replayed) return reply.code(outcome.statusCode).send(outcome.body);
  reply.header('idempotent-replayed', 'true');
  const body = outcome.statusCode >= 400 ? withRequestId(outcome.body as ErrorEnvelope, request.id) : outcome.body;
  return reply.code(outcome.statusCode).send(body);
}

/** The stored answer for a key: replayed for the same request, 422 for another one. */
function replayOf(stored: { requestHash: string; statusCode: number; response: unknown }, hash: string): ChangeOutcome {
  if (stored.requestHash !== hash) throw keyReused();
  return { replayed: true, statusCode: stored.statusCode, body: stored.response };
}

interface BatchEntry<In> {
  input: In;
  keyed: { scope: KeyScope; hash: string } | undefined;
  statusCode: number;
}

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

    fastify.decorate('idempotency', {
      forgetExpired: (limit: number) => deleteExpiredResponses(fastify.db.orm, retainedSince(), limit),
    } satisfies IdempotencyService);

    fastify.decorateReply('sendOutcome', function sendOutcomeOf(this: FastifyReply, outcome: ChangeOutcome) {
      return sendOutcome(this.request, this, outcome);
    });

    fastify.decorate('idempotentChange', async function idempotentChange<
      T,
      P = undefined,
    >(request: FastifyRequest, statusCode: number, work: (tx: Database, prepared: P) => Promise<T>, prepare?: () => Promise<P>): Promise<ChangeOutcome> {
      const keyed = keyedRequest(request);
      if (!keyed) {
        const prepared = (await prepare?.()) as P;
        return { statusCode, body: await fastify.db.transaction((tx) => work(tx, prepared)), replayed: false };
      }

      const { scope, hash } = keyed;
      let prepared: { value: P } | undefined;
      if (prepare && !(await findStoredResponse(fastify.db.orm, scope, retainedSince())))
        prepared = { value: await prepare() };
      const outcome = await fastify.db.transaction(async (tx) => {
        if (!(await tryLockKey(tx, scope))) throw keyInUse();
        const now = new Date();
        const stored = await findStoredResponse(tx, scope, retainedSince());
        if (stored) return replayOf(stored, hash);
        // The stored answer seen before preparing expired in between (a moment at the edge of retention): retry.
        if (prepare && !prepared) throw keyInUse();
        let result: { statusCode: number; body: unknown; error?: AppError };
        try {
          // A savepoint: a refused change (409 insufficient_funds ...) leaves nothing behind but its stored answer.
          result = {
            statusCode,
            body: await tx.transaction((savepoint) => work(savepoint as unknown as Database, prepared?.value as P)),
          };
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          const response = toErrorResponse(error);
          result = { statusCode: response.statusCode, body: response.body, error };
        }
        await storeResponse(tx, {
          ...scope,
          requestHash: hash,
          statusCode: result.statusCode,
          response: result.body,
          createdAt: now,
        });
        return { replayed: false, ...result };
      });
      if ('error' in outcome && outcome.error) throw outcome.error;
      return { statusCode: outcome.statusCode, body: outcome.body, replayed: outcome.replayed };
    });

    fastify.decorate('batchedChange', function batchedChange<
      In,
      Out,
    >(options: BatchedChangeOptions<In, Out>): BatchedChange<In> {
      /**
       * One batch: the keyed requests' locks and stored answers first (two statements for all of
       * them), then the work of every request that is neither replayed nor refused, then the
       * keyed requests' answers stored beside the effect (one statement).
       */
      const runBatch = async (
        tx: Database,
        key: string,
        entries: BatchEntry<In>[],
      ): Promise<(ChangeOutcome | Error)[]> => {
        const outcomes: (ChangeOutcome | Error | undefined)[] = new Array(entries.length);
        const keyedAt = entries.flatMap((entry, index) => (entry.keyed ? [index] : []));
        const firstOfScope = new Map<string, number>();
        for (const index of keyedAt) {
          const scoped = scopeKey((entries[index] as BatchEntry<In>).keyed?.scope as KeyScope);
          // The same key twice in one batch: the second waits for the first, as it would alone.
          if (firstOfScope.has(scoped)) outcomes[index] = keyInUse();
          else firstOfScope.set(scoped, index);
        }
        const claiming = [...firstOfScope.values()];
        const scopes = claiming.map((index) => (entries[index] as BatchEntry<In>).keyed?.scope as KeyScope);
        const locked = await tryLockKeys(tx, scopes);
        const stored = await findStoredResponses(
          tx,
          scopes.filter((_, i) => locked[i]),
          retainedSince(),
        );
        claiming.forEach((index, i) => {
          const keyed = (entries[index] as BatchEntry<In>).keyed as { scope: KeyScope; hash: string };
          if (!locked[i]) outcomes[index] = keyInUse();
          else {
            const answer = stored.get(scopeKey(keyed.scope));
            if (answer) {
              try {
                outcomes[index] = replayOf(answer, keyed.hash);
              } catch (error) {
                outcomes[index] = error as Error;
              }
            }
          }
        });

        const fresh = [...entries.keys()].filter((index) => outcomes[index] === undefined);
        const results =
          fresh.length > 0
            ? await options.work(
                tx,
                key,
                fresh.map((index) => (entries[index] as BatchEntry<In>).input),
              )
            : [];
        const now = new Date();
        const toStore: Parameters<typeof storeResponses>[1][number][] = [];
        fresh.forEach((index, i) => {
          const entry = entries[index] as BatchEntry<In>;
          const result = results[i] as Out | AppError;
          const answer =
            result instanceof AppError
              ? (() => {
                  const response = toErrorResponse(result);
                  return { statusCode: response.statusCode, body: response.body as unknown };
                })()
              : { statusCode: entry.statusCode, body: { success: true, data: result } as unknown };
          if (entry.keyed)
            toStore.push({
              ...entry.keyed.scope,
              requestHash: entry.keyed.hash,
              statusCode: answer.statusCode,
              response: answer.body,
              createdAt: now,
            });
          outcomes[index] = result instanceof AppError ? result : { ...answer, replayed: false };
        });
        await storeResponses(tx, toStore);
        return outcomes as (ChangeOutcome | Error)[];
      };

      const queueLimitMs = fastify.config.databaseQueueLimitMs;
      const batcher = new KeyedBatcher<BatchEntry<In>, ChangeOutcome>(
        (key, entries) => fastify.db.transaction((tx) => runBatch(tx, key, entries)),
        options.maxBatch,
        {
          // Admitted on an estimate; refused if it waited past the limit all the same and a batch starting leaves it behind.
          maxWaitMs: queueLimitMs,
          onFault: ({ key, size, error, rerunAlone }) =>
            fastify.log.warn(
              { err: error, key, size },
              rerunAlone ? 'a batch failed: its requests are run again one by one' : 'a batch was refused',
            ),
        },
      );

      return {
        async run(request, statusCode, key, input) {
          // A crowd waits in the key's batcher, not in the pool: refused only past what the limit allows.
          if (queueLimitMs > 0 && batcher.expectedWaitMs(key) + fastify.db.expectedWaitMs() > queueLimitMs)
            throw overloadedError(1);
          return batcher.submit(key, { input, keyed: keyedRequest(request), statusCode });
        },
      };
    });
  },
  { name: 'idempotency', dependencies: ['db', 'env'] },
);
