import { drizzle } from 'drizzle-orm/node-postgres';
import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import * as schema from '../../../db/schema.js';
import type { DatabaseEngine } from '../../../schemas/enums.js';
import type { AppConfig } from '../../../config/index.js';
import { describeServer } from './connection.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres.js';
import { createListeners, type Listen } from './listen.js';
import { migrateDatabase } from './migrations.js';
import { connectionsClosed, createPool, ping } from './pool.js';
import { type Database, runTransaction } from './transactions.js';
import { DatabaseUnreachableError, destroyConnection, watchDatabase } from './watch.js';

/**
 * The database: the Fastify plugin `db`, and `openDatabase`, which chooses the engine (the server
 * at DATABASE_URL or the embedded PostgreSQL), migrates it and assembles the handle from the pool
 * (pool.ts), transactions (transactions.ts), LISTEN (listen.ts) and the outage watch (watch.ts).
 */

export {
  connectionFailure,
  DATABASE_TIMEOUTS,
  DatabaseStartError,
  describeServer,
} from './connection.js';
export { ChangedMeanwhileError, type Database } from './transactions.js';

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
  listen: Listen;
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

  const { pool, pooled } = createPool(url, settings.databaseQueueLimitMs, log);
  const orm = drizzle({ client: pool, schema }) as unknown as Database;
  const listeners = createListeners(url, log);

  const watch = watchDatabase({
    url,
    ...settings.databaseWatch,
    log,
    onDown: (error) => {
      // Queries waiting on a dead connection fail now (503) instead of at their read timeout.
      const cut = new DatabaseUnreachableError(error.message);
      for (const client of pooled) destroyConnection(client, cut);
      listeners.dropAll(cut);
    },
    onUp: () => listeners.wakeAll(),
  });
  pool.unreachable = () => (watch.down ? new DatabaseUnreachableError(watch.down.message) : undefined);

  let closing: Promise<void> | undefined;
  return {
    engine,
    orm,
    listen: listeners.listen,
    transaction: (work) => runTransaction(orm, work),
    ping: (timeoutMs = 2000) => ping(pool, timeoutMs),
    expectedWaitMs: () => pool.expectedWaitMs(),
    close: () => {
      closing ??= (async () => {
        watch.stop();
        try {
          await listeners.stopAll();
          await pool.end();
          await connectionsClosed(pooled, 2000);
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
  { name: 'db' },
);
