import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from '../db/schema.js';
import { runningEmbeddedUrl, startEmbeddedPostgres } from '../plugins/app/database/embedded-postgres.js';
import type { Database } from '../plugins/app/db.js';
import { checkInvariants, holdsServiceTables, type InvariantResult } from '../plugins/app/invariants/repository.js';

/**
 * Checks every invariant of the money-like state and prints a report:
 *   npm run check-invariants            the database the service uses (DATABASE_URL, or the embedded one in DATA_DIR)
 *   npm run check-invariants -- --json  the same as JSON
 * Reads only, in one read-only snapshot, so it is safe beside a running service. Exits 0 when
 * every invariant holds, 1 when one does not, 2 when the database cannot be read.
 */

const json = process.argv.includes('--json');
const silentLog = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => silentLog, level: 'silent', silent() {} } as never;

/** The database to check, and what to stop afterwards (an embedded server started only for this). */
async function database(): Promise<{ url: string; where: string; stop?: () => Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, where: 'DATABASE_URL' };
  const dataDir = process.env.DATA_DIR ?? './data';
  const running = await runningEmbeddedUrl(dataDir);
  if (running) return { url: running, where: `the embedded PostgreSQL in ${dataDir} (running)` };
  const server = await startEmbeddedPostgres({ dataDir, log: silentLog });
  return { url: server.url, where: `the embedded PostgreSQL in ${dataDir}`, stop: () => server.stop() };
}

function print(results: InvariantResult[], where: string, totalMs: number): void {
  console.log(`Invariants of ${where}:\n`);
  for (const result of results) {
    const status = result.violations.length === 0 ? 'ok  ' : 'FAIL';
    console.log(`  ${status}  ${result.name} (${Math.round(result.ms)} ms)`);
    for (const violation of result.violations) console.log(`          - ${violation}`);
  }
  const held = results.filter((result) => result.violations.length === 0).length;
  console.log(`\n${held} of ${results.length} invariants hold (${(totalMs / 1000).toFixed(1)} s).`);
}

let target: Awaited<ReturnType<typeof database>> | undefined;
try {
  target = await database();
  const pool = new pg.Pool({ connectionString: target.url, max: 1, application_name: 'pack-service-check-invariants' });
  try {
    const orm = drizzle({ client: pool, schema }) as unknown as Database;
    if (!(await holdsServiceTables(orm))) throw new Error(`${target.where} holds none of this service's tables: start the service on it once to create them`);
    const started = performance.now();
    // One snapshot for every check: a service writing meanwhile cannot make two checks disagree.
    const results = await orm.transaction((tx) => checkInvariants(tx), { isolationLevel: 'repeatable read', accessMode: 'read only' });
    const totalMs = performance.now() - started;
    if (json) console.log(JSON.stringify({ where: target.where, ms: Math.round(totalMs), results }, null, 2));
    else print(results, target.where, totalMs);
    process.exitCode = results.every((result) => result.violations.length === 0) ? 0 : 1;
  } finally {
    await pool.end();
  }
} catch (error) {
  const cause = (error as Error).cause as Error | undefined;
  console.error(`cannot check the invariants: ${cause?.message ?? (error as Error).message}`);
  process.exitCode = 2;
} finally {
  await target?.stop?.();
}
