import { createSigner } from 'fast-jwt';
import { buildApp, type App } from '../../app.js';
import { loadConfig } from '../../config/index.js';
import { generateSigningKeyPem } from '../../plugins/app/sessions/keys.js';
import { createTestDatabase } from './test-database.js';

export { createTestDatabase } from './test-database.js';

/**
 * Builds the real app, through the same factory and configuration loader as server.ts; tests
 * differ only in configuration values. Each app gets its own database, copied from the suite's
 * migrated template (on the embedded server of `npm test`, or the external one of
 * `npm run test:pg`) and dropped at teardown.
 */

export const TEST_SECRET = 'test-secret-that-is-long-enough-for-production-use';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** The session signing key of this test process: every app it builds (two instances too) shares it. */
export const TEST_SESSION_KEY = generateSigningKeyPem();

export const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  AUTH_SESSION_PRIVATE_KEY: TEST_SESSION_KEY,
  LOG_LEVEL: 'silent',
  AUTH_JWT_SECRET: TEST_SECRET,
  AUTH_ADMIN_CLAIM: 'role=admin',
  DEMO_DATA: 'false',
  RATE_LIMIT_MAX: '10000',
  MAX_EVENT_LOOP_DELAY: '0',
  // The whole suite at once on a slow two-core machine has stalled a ping past 5 seconds (the
  // database was then taken for down and every request of a file answered 503); the outage tests
  // set the production value themselves.
  DATABASE_WATCH_TIMEOUT: '30 seconds',
  // Tests fire bursts of concurrent work on a shared machine: they queue it; the limit has a test of its own.
  DATABASE_QUEUE_LIMIT: '0',
  // Tests drain the event consumers when they need them (`consumer.drain()`), or turn them on.
  EVENT_CONSUMERS: 'false',
  // Reads see what a test just wrote; the cache has a test of its own.
  LEADERBOARD_CACHE: '0',
  DASHBOARD_CACHE: '0',
};

/** Which server the suite runs on, for test names and comments. */
export const suiteServer = process.env.TEST_DATABASE_URL ? 'external PostgreSQL' : 'embedded PostgreSQL';

/**
 * The app on a fresh database (unless `env` names one: DATABASE_URL, or DATA_DIR for the
 * embedded server the app starts itself); closed, and its database dropped, when the test ends.
 */
export async function buildTestApp(t: Teardown, env: Record<string, string> = {}): Promise<App> {
  const database = !('DATA_DIR' in env) && !('DATABASE_URL' in env) ? await createTestDatabase() : undefined;
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
