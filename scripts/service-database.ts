import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from '../db/schema.js';
import { runningEmbeddedUrl, startEmbeddedPostgres } from '../plugins/app/database/embedded-postgres.js';
import type { Database } from '../plugins/app/database/index.js';
import { holdsServiceTables } from '../plugins/app/invariants/checker.js';

/** The operator scripts' database: the one the service uses, found as the service finds it. */

const silentLog = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  trace() {},
  fatal() {},
  child: () => silentLog,
  level: 'silent',
  silent() {},
} as never;

/**
 * DATABASE_URL, or else the embedded PostgreSQL in DATA_DIR (./data): the running one, or one
 * started for the script, which `stop` stops.
 */
export async function serviceDatabase(): Promise<{ url: string; where: string; stop?: () => Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, where: 'DATABASE_URL' };
  const dataDir = process.env.DATA_DIR ?? './data';
  const running = await runningEmbeddedUrl(dataDir);
  if (running) return { url: running, where: `the embedded PostgreSQL in ${dataDir} (running)` };
  const server = await startEmbeddedPostgres({ dataDir, log: silentLog });
  return { url: server.url, where: `the embedded PostgreSQL in ${dataDir}`, stop: () => server.stop() };
}

/**
 * Runs an operator script's `work` on the service's database (one connection, named for the
 * script) and sets the exit code it answers; a database that cannot be used prints why and exits 2.
 */
export async function withServiceDatabase(
  script: string,
  work: (orm: Database, where: string) => Promise<number>,
): Promise<void> {
  let target: Awaited<ReturnType<typeof serviceDatabase>> | undefined;
  try {
    target = await serviceDatabase();
    const pool = new pg.Pool({ connectionString: target.url, max: 1, application_name: `pack-service-${script}` });
    try {
      const orm = drizzle({ client: pool, schema }) as unknown as Database;
      if (!(await holdsServiceTables(orm)))
        throw new Error(
          `${target.where} holds none of this service's tables: start the service on it once to create them`,
        );
      process.exitCode = await work(orm, target.where);
    } finally {
      await pool.end();
    }
  } catch (error) {
    const cause = (error as Error).cause as Error | undefined;
    console.error(`${script} cannot use the database: ${cause?.message ?? (error as Error).message}`);
    process.exitCode = 2;
  } finally {
    await target?.stop?.();
  }
}
