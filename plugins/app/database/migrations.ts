import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { connectionFailure, DATABASE_TIMEOUTS } from './connection.js';
import { MIGRATIONS_FOLDER } from './paths.js';

/** Any constant works; it only has to be the same for every instance of this service. */
const MIGRATION_LOCK_KEY = 7_204_117_321;

/** Applies the committed migrations; instances starting together migrate once, the others wait. */
export async function migrateDatabase(url: string, log: FastifyBaseLogger): Promise<string> {
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
