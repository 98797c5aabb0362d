import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import * as schema from '../../db/schema.js';
import type { AppConfig } from '../external/env.js';
import { lockDataDir } from './database/data-dir-lock.js';
import { MIGRATIONS_FOLDER } from './database/paths.js';
import { pgliteTemplate } from './database/pglite-template.js';

/** One type for PGlite and node-postgres: both are PostgreSQL, the same queries serve both. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  dialect: 'pglite' | 'postgres';
  orm: Database;
  /**
   * Runs `work` in one transaction. On PostgreSQL a serialization failure or deadlock is retried
   * (the work must be safe to run again); PGlite runs one transaction at a time.
   */
  transaction<T>(work: (tx: Database) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` for each NOTIFY on `channel`, from any instance. On PostgreSQL a dedicated
   * connection listens and reconnects when lost, calling `onGap` since notifications may have
   * been missed meanwhile. Resolves with the function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onGap: () => void): Promise<() => Promise<void>>;
  /** Resolves when the database answers a query within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);
const MAX_TRANSACTION_ATTEMPTS = 4;
/** Any constant works; it only has to be the same for every instance of this service. */
const MIGRATION_LOCK_KEY = 7_204_117_321;

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function makeHandle(
  dialect: DatabaseHandle['dialect'],
  orm: Database,
  closeOnce: () => Promise<void>,
  listen: DatabaseHandle['listen'],
): DatabaseHandle {
  let closing: Promise<void> | undefined;
  return {
    dialect,
    orm,
    listen,
    async transaction<T>(work: (tx: Database) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await orm.transaction((tx) => work(tx as unknown as Database));
        } catch (error) {
          const code = (error as { code?: string; cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
          if (attempt >= MAX_TRANSACTION_ATTEMPTS || !code || !RETRYABLE_SQLSTATES.has(code)) throw error;
        }
      }
    },
    ping: (timeoutMs = 2000) => withTimeout(orm.execute(sql`select 1`), timeoutMs, 'The database').then(() => undefined),
    close: () => {
      closing ??= closeOnce();
      return closing;
    },
  };
}

export function isInMemory(dataDir: string): boolean {
  return dataDir.startsWith('memory://');
}

// Each driver is imported only when configured: loading both would cost every start ~100 ms.
async function openPglite(config: AppConfig, log: FastifyBaseLogger): Promise<DatabaseHandle> {
  const [{ PGlite }, { drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ]);
  let client: PGlite;
  let release = () => {};
  if (isInMemory(config.dataDir)) {
    client = await PGlite.create({ loadDataDir: await pgliteTemplate() });
  } else {
    release = lockDataDir(config.dataDir);
    try {
      const fresh = !existsSync(join(config.dataDir, 'PG_VERSION'));
      if (fresh) log.info({ dataDir: config.dataDir }, 'creating a new PGlite database from the migrated template');
      // Only a new folder needs the template; a restart reopens the folder as it is.
      client = await PGlite.create(config.dataDir, fresh ? { loadDataDir: await pgliteTemplate() } : {});
    } catch (error) {
      release();
      throw error;
    }
  }
  const orm = drizzlePglite({ client, schema }) as unknown as Database;
  const close = async () => {
    try {
      if (!client.closed) await client.close();
    } finally {
      release();
    }
  };
  try {
    await migratePglite(drizzlePglite({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
  } catch (error) {
    await close();
    throw error;
  }
  const listen: DatabaseHandle['listen'] = async (channel, onNotify) => {
    const unlisten = await client.listen(channel, onNotify);
    return async () => {
      if (!client.closed) await unlisten();
    };
  };
  return makeHandle('pglite', orm, close, listen);
}

async function openPostgres(databaseUrl: string, log: FastifyBaseLogger): Promise<DatabaseHandle> {
  const [{ default: pg }, { drizzle: drizzleNodePg }, { migrate: migrateNodePg }] = await Promise.all([
    import('pg'),
    import('drizzle-orm/node-postgres'),
    import('drizzle-orm/node-postgres/migrator'),
  ]);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, connectionTimeoutMillis: 5000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', (error) => log.error({ err: error }, 'idle PostgreSQL connection failed'));
  try {
    const client = await pool.connect();
    try {
      // Several instances starting at once: one migrates, the others wait and find nothing to do.
      await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      try {
        await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      }
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end();
    throw error;
  }
  const orm = drizzleNodePg({ client: pool, schema }) as unknown as Database;
  const listeners = new Set<() => Promise<void>>();
  const listen: DatabaseHandle['listen'] = async (channel, onNotify, onGap) => {
    let stopped = false;
    let client: InstanceType<typeof pg.Client> | undefined;
    let retry: NodeJS.Timeout | undefined;
    const connect = async (delayMs: number): Promise<void> => {
      const next = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
      const reconnect = (error?: Error) => {
        if (stopped || client !== next) return;
        log.warn({ err: error, channel }, 'LISTEN connection lost; reconnecting');
        client = undefined;
        onGap();
        retry = setTimeout(() => void connect(Math.min(delayMs * 2, 30_000)), delayMs);
      };
      client = next;
      next.on('notification', (message) => onNotify(message.payload ?? ''));
      next.on('error', reconnect);
      next.on('end', () => reconnect());
      try {
        await next.connect();
        await next.query(`listen "${channel.replace(/"/g, '""')}"`);
      } catch (error) {
        await next.end().catch(() => {});
        reconnect(error as Error);
      }
    };
    await connect(500);
    const stop = async () => {
      stopped = true;
      clearTimeout(retry);
      listeners.delete(stop);
      await client?.end().catch(() => {});
    };
    listeners.add(stop);
    return stop;
  };
  const close = async () => {
    await Promise.all([...listeners].map((stop) => stop()));
    await pool.end();
  };
  return makeHandle('postgres', orm, close, listen);
}

/** Opens the configured database and brings its schema up to date. */
export function openDatabase(config: AppConfig, log: FastifyBaseLogger): Promise<DatabaseHandle> {
  return config.databaseUrl ? openPostgres(config.databaseUrl, log) : openPglite(config, log);
}

declare module 'fastify' {
  interface FastifyInstance {
    db: DatabaseHandle;
  }
}

export default fp(
  async (fastify) => {
    const handle = await openDatabase(fastify.config, fastify.log);
    fastify.decorate('db', handle);
    fastify.addHook('onClose', async () => {
      await handle.close();
    });
  },
  { name: 'db', dependencies: ['env'] },
);
