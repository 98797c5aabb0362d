import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { overloadedError } from '../errors.js';
import { connectionSettings } from './connection.js';

/** Driver errors after which a connection cannot be trusted: its query may still run, or its socket is gone. */
const BROKEN_CONNECTION = /Query read timeout|Connection terminated|is not queryable|ECONNRESET/;

/**
 * A pool that refuses work at once while the database is known to be unreachable, instead of
 * letting each request wait for a connection that cannot come; and that never loses a connection
 * it lent. drizzle-orm 0.45's pooled transaction() runs BEGIN outside its try/finally (a failed
 * BEGIN never releases its client) and releases without the error (a client whose query timed
 * out goes back to the pool with the query still running): drizzle-team/drizzle-orm#6023 and
 * #6114. A lent client is therefore released here as soon as its connection is lost, released
 * once whatever its borrower does, and destroyed rather than reused after such an error.
 */
export class GuardedPool extends pg.Pool {
  unreachable: (() => Error | undefined) | undefined;
  /** See DATABASE_QUEUE_LIMIT; 0 queues everything. */
  queueLimitMs = 0;
  /** How long a connection is lent, on average (weighted towards the latest loans). */
  averageLoanMs = 0;

  /**
   * How long new work can expect to wait for a connection: nothing while one is free, else its
   * place in the queue over the connections that serve it, times how long each is held.
   */
  expectedWaitMs(): number {
    const size = this.options.max;
    if (this.idleCount > 0 || this.totalCount < size) return 0;
    return ((this.waitingCount + 1) / size) * this.averageLoanMs;
  }

  /**
   * A connection from the pool; with a `deadlineMs`, one that must queue behind busy connections
   * is refused with 503 `overloaded` once it has waited that long, and a connection granted later
   * goes straight back to the pool. The estimate above cannot see a crowd that arrives at once,
   * before any loan shows how long connections are held now: this bounds its wait all the same.
   * Work that has left the queue to open a new connection is bounded by the connect timeout
   * instead: refusing it would leave the connection it is opening unused.
   */
  #borrow(deadlineMs: number): Promise<pg.PoolClient> {
    const { loan, place } = this.#connectInTurn();
    if (deadlineMs <= 0 || place === undefined) return loan;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        if (this.#stillQueued(place)) reject(overloadedError(1));
      }, deadlineMs);
    });
    return Promise.race([loan, deadline]).then(
      (client) => {
        clearTimeout(timer);
        return client;
      },
      (error) => {
        clearTimeout(timer);
        loan.then(
          (late) => late.release(),
          () => {},
        );
        throw error;
      },
    );
  }

  /** How many loans have joined pg-pool's queue of waiters so far. */
  #joinedQueue = 0;

  /**
   * pg-pool's connect(), and the loan's place in its queue of waiters if it joined it (it does
   * when a connection is idle or none can be opened; otherwise it opens a connection at once).
   */
  #connectInTurn(): { loan: Promise<pg.PoolClient>; place: number | undefined } {
    const joins = this.idleCount > 0 || this.totalCount >= this.options.max;
    const place = joins ? ++this.#joinedQueue : undefined;
    return { loan: super.connect(), place };
  }

  /**
   * The queue is first in, first out: the loans still in it are the last `waitingCount` to join.
   * One taken out (given an idle connection, or room to open one) is not waiting behind others.
   */
  #stillQueued(place: number): boolean {
    return place > this.#joinedQueue - this.waitingCount;
  }

  private refusal(): Error | undefined {
    const unreachable = this.unreachable?.();
    if (unreachable) return unreachable;
    // Work that would wait past the limit is refused now: a caller retrying in a second (or at
    // another instance) is better served than one queued for seconds, and the queue stays short.
    if (this.queueLimitMs > 0 && this.expectedWaitMs() > this.queueLimitMs) return overloadedError(1);
    return undefined;
  }

  /** A connection that is refused only while the database is down, never for the queue's length. */
  connectWaitingItsTurn(): Promise<pg.PoolClient> {
    const unreachable = this.unreachable?.();
    return unreachable
      ? Promise.reject(unreachable)
      : this.#connectInTurn().loan.then((client) => guardLoan(this, client));
  }

  recordLoan(ms: number): void {
    this.averageLoanMs = this.averageLoanMs === 0 ? ms : this.averageLoanMs * 0.9 + ms * 0.1;
  }

  // pg-pool's own query() calls connect with a callback and handles its client itself; drizzle's
  // transactions call it without one. Work admitted still waits no longer than the limit.
  // biome-ignore lint/suspicious/noExplicitAny: pg-pool's overloads cannot be restated in a subclass.
  override connect(callback?: any): any {
    const error = this.refusal();
    if (callback) {
      if (error) process.nextTick(() => callback(error, undefined, () => {}));
      else
        this.#borrow(this.queueLimitMs).then(
          (client) => callback(undefined, client, (failure?: Error) => client.release(failure)),
          (failure) => callback(failure, undefined, () => {}),
        );
      return undefined;
    }
    return error ? Promise.reject(error) : this.#borrow(this.queueLimitMs).then((client) => guardLoan(this, client));
  }
}

function guardLoan(pool: GuardedPool, client: pg.PoolClient): pg.PoolClient {
  const poolRelease = client.release;
  const poolQuery = client.query;
  const lentAt = performance.now();
  let released = false;
  let broken: Error | undefined;
  const giveBack = (error?: Error | boolean) => {
    if (released) return;
    released = true;
    pool.recordLoan(performance.now() - lentAt);
    client.off('error', lost);
    client.off('end', ended);
    client.query = poolQuery;
    poolRelease.call(client, error || broken);
  };
  function lost(error: Error) {
    broken ??= error;
    giveBack(error);
  }
  function ended() {
    lost(new Error('Connection terminated'));
  }
  client.on('error', lost);
  client.on('end', ended);
  client.query = function guardedQuery(this: pg.PoolClient, ...args: unknown[]) {
    const result = (poolQuery as (...a: unknown[]) => unknown).apply(this, args);
    if (result instanceof Promise) {
      // A connection that failed this way is given back (to be destroyed) now: its borrower may
      // never release it (a failed BEGIN).
      result.catch((error: Error) => {
        if (BROKEN_CONNECTION.test(error?.message ?? '')) lost(error);
      });
    }
    return result;
  } as typeof client.query;
  client.release = giveBack;
  // Lost between the pool handing it out and this wrapper: its events have already passed.
  if ((client as unknown as { _queryable?: boolean })._queryable === false)
    lost(new Error('Connection terminated before use'));
  return client;
}

/**
 * The service's pool of 10 connections, and the set of its connections (connecting or
 * connected), so that an outage can end them all at once.
 */
export function createPool(
  url: string,
  queueLimitMs: number,
  log: FastifyBaseLogger,
): { pool: GuardedPool; pooled: Set<pg.Client> } {
  const pooled = new Set<pg.Client>();
  class TrackedClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super(config);
      pooled.add(this);
      const forget = () => pooled.delete(this);
      this.once('end', forget);
      this.on('error', forget);
    }
  }
  const pool = new GuardedPool({ ...connectionSettings(url), max: 10, Client: TrackedClient });
  pool.queueLimitMs = queueLimitMs;
  // A client losing its connection must not crash the process. Idle ones are reported by the
  // pool, which replaces them; one checked out by a request emits the error itself, and its query
  // fails with it (the request answers 503), so the event only needs a listener. The pool drops
  // the broken client when it is released.
  pool.on('error', (error) => log.error({ err: error }, 'idle PostgreSQL connection failed'));
  pool.on('connect', (client) => client.on('error', (error) => log.warn({ err: error }, 'PostgreSQL connection lost')));
  return { pool, pooled };
}

/**
 * Resolves once every connection in `pooled` has closed, or after `timeoutMs`. pg-pool's end()
 * resolves once it has asked its connections to end, before they have: an embedded server
 * stopped right then ends them itself, and they log its FATAL (a clean stop must log no error).
 */
export async function connectionsClosed(pooled: Set<pg.Client>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (pooled.size > 0 && performance.now() < deadline) await new Promise((wait) => setTimeout(wait, 10));
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Resolves when the database answers `select 1` within `timeoutMs`. The race bounds the wait for
 * a connection, the query's own read timeout the rest. The pool refuses at once while the watch
 * has the database down.
 */
export async function ping(pool: GuardedPool, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  const loan = pool.connectWaitingItsTurn();
  let client: pg.PoolClient;
  try {
    client = await withTimeout(loan, timeoutMs, 'The database');
  } catch (error) {
    loan.then(
      (late) => late.release(),
      () => {},
    );
    throw error;
  }
  try {
    await client.query({
      text: 'select 1',
      query_timeout: Math.max(1, Math.round(deadline - performance.now())),
    } as pg.QueryConfig);
    client.release();
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
}
