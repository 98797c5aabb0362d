import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PROJECT_ROOT } from '../../config/project-root.js';
import { MIGRATIONS_FOLDER } from '../../plugins/app/database/paths.js';

/**
 * The suite's database server: the external PostgreSQL at TEST_DATABASE_URL (npm run test:pg),
 * or an embedded PostgreSQL that tap's `before` step starts in a folder of its own (npm test).
 * Each holds one migrated template database; every test app gets a fresh copy of it
 * (CREATE DATABASE ... TEMPLATE, well under a second), dropped when its test ends.
 */

export const externalServerUrl = process.env.TEST_DATABASE_URL || undefined;

/**
 * Keyed by the checkout, so two checkouts on one machine do not share a server; TEST_SUITE_DIR
 * gives a run a server of its own, for two tap runs at once in one checkout.
 */
export const SUITE_DATA_DIR =
  process.env.TEST_SUITE_DIR ||
  join(tmpdir(), `pack-service-test-postgres-${createHash('sha256').update(PROJECT_ROOT).digest('hex').slice(0, 12)}`);

export interface SuiteDatabase {
  /** A connection string to the server's `postgres` database (for CREATE/DROP DATABASE). */
  serverUrl: string;
  template: string;
  embedded: boolean;
}

/** Where the `before` step tells the test files which server and template to use. */
const statePath = () => `${SUITE_DATA_DIR}.${externalServerUrl ? 'external' : 'embedded'}.json`;

export function writeSuiteDatabase(state: SuiteDatabase): void {
  writeFileSync(statePath(), JSON.stringify(state), { mode: 0o600 });
}

export function readSuiteDatabase(): SuiteDatabase {
  try {
    return JSON.parse(readFileSync(statePath(), 'utf8')) as SuiteDatabase;
  } catch {
    throw new Error(
      'No test database server: run the tests through tap (npm test, npm run test:pg), whose `before` step starts it.',
    );
  }
}

/** Changes whenever a migration does, so a stale template is never used. */
export function migrationsFingerprint(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_FOLDER, { recursive: true, encoding: 'utf8' }).sort()) {
    if (file.endsWith('.sql') || file.endsWith('_journal.json'))
      hash.update(`${file}\n`).update(readFileSync(join(MIGRATIONS_FOLDER, file)));
  }
  return hash.digest('hex').slice(0, 12);
}

export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A new database copied from the suite's template, and how to drop it. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const { serverUrl, template, embedded } = readSuiteDatabase();
  const name = `pack_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  // Copying the files is the fastest way where fsync is off (the suite's own server); a shared
  // server keeps its default strategy, which needs no checkpoint.
  const strategy = embedded ? ' strategy file_copy' : '';
  await withClient(serverUrl, (client) => client.query(`create database "${name}" template "${template}"${strategy}`));
  return {
    url: databaseUrl(serverUrl, name),
    drop: () =>
      withClient(serverUrl, (client) => client.query(`drop database if exists "${name}" with (force)`)).then(
        () => undefined,
      ),
  };
}
