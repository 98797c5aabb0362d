import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import pg from 'pg';
import * as schema from '../../db/schema.js';
import type { DatabaseEngine } from '../../schemas/enums.js';
import type { AppConfig } from '../../config/index.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './database/embedded-postgres.js';
import { MIGRATIONS_FOLDER } from './database/paths.js';
import { DatabaseUnreachableError, destroyConnection, watchDatabase } from './database/watch.js';
import { overloadedError } from './errors.js';

/** The database and its transactions share this type, so repositories take either. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  /** `embedded`: the service's own PostgreSQL in DATA_DIR; `external`: the server at DATABASE_URL. */
  engine: DatabaseEngine;
  orm: Database;
  /**
   * Runs `work` in one transaction. A serialization failure or deadlock is retried (the work must
   * be safe to run again).
   */
  transaction<T>(work: (tx: Database) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` for each NOTIFY on `channel`, from any instance. A dedicated connection
   * listens and reconnects when lost, calling `onGap` when it is lost and again once it listens
   * anew, since notifications may have been missed in between. Resolves with the function that
   * stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onGap: () => void): Promise<() => Promise<void>>;
  /**
   * Resolves when the database answers a query within `timeoutMs`, else rejects. It waits its
   * turn for a pool connection rather than being refused as overload (DATABASE_QUEUE_LIMIT): a
   * busy instance is still a working one. A connection that arrives after the timeout goes back.
   */
  ping(timeoutMs?: number): Promise<void>;
  /** How long work asking for a connection now can expect to wait for one (see DATABASE_QUEUE_LIMIT). */
  expectedWaitMs(): number;
  close(): Promise<void>;
}

const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);

/**
 * Thrown by work that finds, part-way, that what it read has changed under it (a pack archived
 * while a batch was selling it): like a serialization failure, the transaction is rolled back and
 * run again, and reads what is true now.
 */
export class ChangedMeanwhileError extends Error {
  readonly code = '40001';
  constructor(message: string) {
    super(message);
    this.name = 'ChangedMeanwhileError';
  }
}
const MAX_TRANSACTION_ATTEMPTS = 4;
/** Any constant works; it only has to be the same for every instance of this service. */
const MIGRATION_LOCK_KEY = 7_204_117_321;

/**
 * Bounds on every connection: a statement running longer than this is cancelled by the server, a
 * transaction left idle (holding its locks) is ended, and a query whose answer never arrives (a
 * network cut) fails on our side a little later.
 */
export const DATABASE_TIMEOUTS = {
  connectMs: 5000,
  statementMs: 15_000,
  idleInTransactionMs: 10_000,
  queryMs: 20_000,
} as const;

/** The database cannot be used; the message says what is wrong and what to do (printed without a stack). */
export class DatabaseStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseStartError';
  }
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `host:port/database`, never the password. */
export function describeServer(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname || 'localhost'}:${parsed.port || 5432}${parsed.pathname}`;
}

/** A connection failure at start, as a sentence an operator can act on. */
export function connectionFailure(error: unknown, url: string): DatabaseStartError {
  const parsed = new URL(url);
  const host = `${parsed.hostname || 'localhost'}:${parsed.port || 5432}`;
  const database = decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username) || 'postgres';
  const user = decodeURIComponent(parsed.username) || 'the current user';
  const { code, message } = error as { code?: string; message?: string };
  const because = (() => {
    switch (code) {
      case '3D000':
        return `the database "${database}" does not exist on ${host}. Create it (createdb -h ${parsed.hostname} -p ${parsed.port || 5432} ${parsed.username ? `-U ${user} ` : ''}${database}, or in psql: create database "${database}";) or fix DATABASE_URL.`;
      case '28P01':
      case '28000':
        return `PostgreSQL at ${host} refused user "${user}": ${message}. Check the user and password in DATABASE_URL.`;
      case 'ECONNREFUSED':
        return `nothing accepts connections at ${host}: is PostgreSQL running there, and is DATABASE_URL right?`;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `the host "${parsed.hostname}" cannot be resolved. Check DATABASE_URL.`;
      default:
        return /timeout/i.test(message ?? '')
          ? `PostgreSQL at ${host} did not answer within ${DATABASE_TIMEOUTS.connectMs / 1000} s.`
          : `${message ?? String(error)} (PostgreSQL at ${host}).`;
    }
  })();
  return new DatabaseStartError(`Cannot use the database ${describeServer(url)}: ${because}`, { cause: error });
}

/** Applies the committed migrations; instances starting together migrate once, the others wait. */
async function migrateDatabase(url: string, log: FastifyBaseLogger): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: DATABASE_TIMEOUTS.connectMs });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw connectionFailure(error, url);
  }
  try {
    const { rows } = await client.query<{ server_version: string }>('show server_version');
    // Migrations may rewrite large tables: no statement timeout on this session.
    await client.query('set statement_timeout = 0');
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const started = performance.now();
      await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
      log.debug({ ms: Math.round(performance.now() - started) }, 'migrations checked');
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
    return rows[0]?.server_version ?? '?';
  } finally {
    await client.end();
  }
}

function connectionSettings(url: string): pg.ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: DATABASE_TIMEOUTS.connectMs,
    statement_timeout: DATABASE_TIMEOUTS.statementMs,
    idle_in_transaction_session_timeout: DATABASE_TIMEOUTS.idleInTransactionMs,
    query_timeout: DATABASE_TIMEOUTS.queryMs,
    application_name: 'pack-service',
  };
}

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
class GuardedPool extends pg.Pool {
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

async function connect(
  url: string,
  engine: DatabaseHandle['engine'],
  log: FastifyBaseLogger,
  settings: Pick<AppConfig, 'databaseWatch' | 'databaseQueueLimitMs'>,
  onClosed: () => Promise<void>,
): Promise<DatabaseHandle> {
  const version = await migrateDatabase(url, log);
  log.info(
    { engine, server: describeServer(url), version },
    engine === 'embedded' ? 'database: embedded PostgreSQL' : 'database: PostgreSQL at DATABASE_URL',
  );

  // Every connection of the pool, connecting or connected, so an outage can end them all at once.
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
  pool.queueLimitMs = settings.databaseQueueLimitMs;
  // A client losing its connection must not crash the process. Idle ones are reported by the
  // pool, which replaces them; one checked out by a request emits the error itself, and its query
  // fails with it (the request answers 503), so the event only needs a listener. The pool drops
  // the broken client when it is released.
  pool.on('error', (error) => log.error({ err: error }, 'idle PostgreSQL connection failed'));
  pool.on('connect', (client) => client.on('error', (error) => log.warn({ err: error }, 'PostgreSQL connection lost')));
  const orm = drizzle({ client: pool, schema }) as unknown as Database;

  const listeners = new Set<() => Promise<void>>();
  /** Per LISTEN connection: drop it (the database went away) and reconnect now (it is back). */
  const listenerControls = new Set<{ drop(error: Error): void; wake(): void }>();
  const listen: DatabaseHandle['listen'] = async (channel, onNotify, onGap) => {
    let stopped = false;
    let client: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    const connectListener = async (delayMs: number, reconnecting: boolean): Promise<void> => {
      // keepAlive: a half-open connection (a silent network cut) is noticed instead of dropping notifications unseen.
      const next = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: DATABASE_TIMEOUTS.connectMs,
        application_name: 'pack-service-listen',
        keepAlive: true,
      });
      const reconnect = (error?: Error) => {
        if (stopped || client !== next) return;
        log.warn({ err: error, channel }, 'LISTEN connection lost; reconnecting');
        client = undefined;
        onGap();
        retry = setTimeout(() => {
          retry = undefined;
          void connectListener(Math.min(delayMs * 2, 30_000), true);
        }, delayMs);
      };
      client = next;
      next.on('notification', (message) => onNotify(message.payload ?? ''));
      next.on('error', reconnect);
      next.on('end', () => reconnect());
      try {
        await next.connect();
        await next.query(`listen ${next.escapeIdentifier(channel)}`);
        // What happened while nobody listened is unknown: treat it as a change.
        if (reconnecting && !stopped) {
          log.info({ channel }, 'LISTEN connection restored');
          onGap();
        }
      } catch (error) {
        await next.end().catch(() => {});
        reconnect(error as Error);
      }
    };
    await connectListener(500, false);
    const control = {
      drop: (error: Error) => {
        if (client) destroyConnection(client, error);
      },
      // The database is back: reconnect now rather than when the back-off says.
      wake: () => {
        if (stopped || client || !retry) return;
        clearTimeout(retry);
        retry = undefined;
        void connectListener(500, true);
      },
    };
    listenerControls.add(control);
    const stop = async () => {
      stopped = true;
      clearTimeout(retry);
      listeners.delete(stop);
      listenerControls.delete(control);
      await client?.end().catch(() => {});
    };
    listeners.add(stop);
    return stop;
  };

  const watch = watchDatabase({
    url,
    ...settings.databaseWatch,
    log,
    onDown: (error) => {
      // Queries waiting on a dead connection fail now (503) instead of at their read timeout.
      const cut = new DatabaseUnreachableError(error.message);
      for (const client of pooled) destroyConnection(client, cut);
      for (const control of listenerControls) control.drop(cut);
    },
    onUp: () => {
      for (const control of listenerControls) control.wake();
    },
  });
  pool.unreachable = () => (watch.down ? new DatabaseUnreachableError(watch.down.message) : undefined);

  let closing: Promise<void> | undefined;
  return {
    engine,
    orm,
    listen,
    async transaction<T>(work: (tx: Database) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await orm.transaction((tx) => work(tx as unknown as Database));
        } catch (error) {
          const code =
            (error as { code?: string; cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
          if (attempt >= MAX_TRANSACTION_ATTEMPTS || !code || !RETRYABLE_SQLSTATES.has(code)) throw error;
        }
      }
    },
    // The race bounds the wait for a connection, the query's own read timeout the rest. The pool
    // refuses at once while the watch has the database down.
    async ping(timeoutMs = 2000) {
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
    },
    expectedWaitMs: () => pool.expectedWaitMs(),
    close: () => {
      closing ??= (async () => {
        watch.stop();
        try {
          await Promise.all([...listeners].map((stop) => stop()));
          await pool.end();
        } finally {
          await onClosed();
        }
      })();
      return closing;
    },
  };
}

/**
 * Opens the configured database and brings its schema up to date: the server at DATABASE_URL,
 * or else the embedded PostgreSQL in DATA_DIR, started here and stopped by `close()`.
 */
export async function openDatabase(config: AppConfig, log: FastifyBaseLogger): Promise<DatabaseHandle> {
  if (config.databaseUrl) return connect(config.databaseUrl, 'external', log, config, async () => {});
  let server: EmbeddedPostgres | undefined;
  try {
    server = await startEmbeddedPostgres({ dataDir: config.dataDir, log });
    const embedded = server;
    return await connect(server.url, 'embedded', log, config, () => embedded.stop());
  } catch (error) {
    await server?.stop();
    throw error;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    db: DatabaseHandle;
  }
}

/** Decorates the database opened by the app factory and closes it last, after the server stopped. */
export default fp<{ database: DatabaseHandle }>(
  async (fastify, { database }) => {
    fastify.decorate('db', database);
    fastify.addHook('onClose', async () => {
      await database.close();
    });
  },
  { name: 'db', dependencies: ['env'] },
);
