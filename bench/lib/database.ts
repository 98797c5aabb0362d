import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { openDatabase, type DatabaseHandle } from '../../plugins/app/database/index.js';
import { loadConfig } from '../../config/index.js';
import { DATABASE_ENGINES, type DatabaseEngine } from '../../schemas/enums.js';
import { BENCH_SECRET } from './credentials.js';

// The database a bench runs against: a data folder for the embedded PostgreSQL, or a fresh
// database on the external server.

const noop = () => {};
const silent = {
  level: 'silent',
  info: noop,
  warn: noop,
  error: noop,
  debug: noop,
  trace: noop,
  fatal: noop,
  silent: noop,
  child: () => silent,
} as unknown as FastifyBaseLogger;

export type DatabaseKind = DatabaseEngine;

export interface BenchDatabase {
  kind: DatabaseKind;
  env: Record<string, string>;
  /** The database, opened as the service opens it; `settings` are configuration values (for seeding: longer timeouts). */
  open(settings?: Record<string, string>): Promise<DatabaseHandle>;
  cleanup(): Promise<void>;
}

/** `--db embedded` (the default) or `--db external`; anything else is refused. */
export function databaseKind(value: string | undefined): DatabaseKind {
  if (value === undefined) return 'embedded';
  if ((DATABASE_ENGINES as readonly string[]).includes(value)) return value as DatabaseKind;
  throw new Error(`--db must be embedded or external (got ${value})`);
}

/**
 * A new data folder for the embedded PostgreSQL (the server under test starts it), or a new
 * database on the external PostgreSQL server at `serverUrl`.
 */
export async function benchDatabase(
  kind: DatabaseKind,
  serverUrl = 'postgres://postgres@127.0.0.1:5432/test',
): Promise<BenchDatabase> {
  if (kind === 'embedded') {
    const folder = mkdtempSync(join(tmpdir(), 'pack-bench-'));
    // As root, PostgreSQL runs as the `postgres` user, which must reach the folder.
    chmodSync(folder, 0o755);
    const env = { DATA_DIR: join(folder, 'data') };
    return {
      kind,
      env,
      open: (settings = {}) => openDatabase(loadConfig({ ...env, AUTH_JWT_SECRET: BENCH_SECRET, ...settings }), silent),
      cleanup: async () => rmSync(folder, { recursive: true, force: true }),
    };
  }
  const name = `pack_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const env = { DATABASE_URL: url.toString() };
  return {
    kind,
    env,
    open: (settings = {}) => openDatabase(loadConfig({ ...env, AUTH_JWT_SECRET: BENCH_SECRET, ...settings }), silent),
    cleanup: async () => {
      // BENCH_KEEP_DATABASE=1 leaves it for inspection (EXPLAIN, the invariant checker ...).
      if (process.env.BENCH_KEEP_DATABASE) {
        console.error(`kept the database ${name}`);
        return;
      }
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists "${name}" with (force)`);
      await client.end();
    },
  };
}
