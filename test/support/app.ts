import { randomBytes } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import pg from 'pg';
import { buildApp, type App } from '../../app.js';
import { loadConfig } from '../../plugins/external/env.js';

/**
 * Builds the real app, through the same factory and configuration loader as server.ts; tests
 * differ only in configuration values. With TEST_DATABASE_URL set (npm run test:pg) each app gets
 * its own fresh PostgreSQL database, dropped at teardown; otherwise an in-memory PGlite.
 */

export const TEST_SECRET = 'test-secret-that-is-long-enough-for-production-use';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  DATA_DIR: 'memory://',
  AUTH_JWT_SECRET: TEST_SECRET,
  AUTH_ADMIN_CLAIM: 'role=admin',
  DEMO_DATA: 'false',
  RATE_LIMIT_MAX: '10000',
  MAX_EVENT_LOOP_DELAY: '0',
};

export const usingPostgres = Boolean(process.env.TEST_DATABASE_URL);

/** A new, empty PostgreSQL database on the TEST_DATABASE_URL server, and how to drop it. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `pack_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** The app on a fresh database; closed (and its database dropped) when the test ends. */
export async function buildTestApp(t: Teardown, env: Record<string, string> = {}): Promise<App> {
  const database = usingPostgres && !('DATA_DIR' in env) && !('DATABASE_URL' in env) ? await createTestDatabase() : undefined;
  const config = loadConfig({ ...TEST_ENV, ...(database ? { DATABASE_URL: database.url } : {}), ...env });
  let app: App;
  try {
    app = await buildApp(config);
    await app.ready();
  } catch (error) {
    await database?.drop();
    throw error;
  }
  t.teardown(async () => {
    await app.close();
    await database?.drop();
  });
  return app;
}

/** A token signed with the test secret; claims override the defaults (sub, one hour of validity). */
export function tokenFor(sub: string, claims: Record<string, unknown> = {}, secret = TEST_SECRET): string {
  const sign = createSigner({ key: secret, algorithm: 'HS256', expiresIn: 3600_000 });
  return sign({ sub, ...claims });
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
