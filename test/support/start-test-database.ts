import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { startEmbeddedPostgres } from '../../plugins/app/database/embedded-postgres.js';
import { openDatabase } from '../../plugins/app/database/index.js';
import { loadConfig } from '../../config/index.js';
import {
  databaseUrl,
  externalServerUrl,
  migrationsFingerprint,
  SUITE_DATA_DIR,
  withClient,
  writeSuiteDatabase,
} from './test-database.js';

// tap's `before` step: the suite's database server and its migrated template database.
const log = pino({ level: process.env.TEST_DATABASE_LOG_LEVEL ?? 'warn' });
const started = performance.now();

let serverUrl: string;
if (externalServerUrl) {
  serverUrl = externalServerUrl;
} else {
  // Detached: it outlives this step, serves every test file, and tap's `after` step stops it.
  const server = await startEmbeddedPostgres({ dataDir: SUITE_DATA_DIR, log, detached: true, durable: false });
  serverUrl = databaseUrl(server.url, 'postgres');
}

// The embedded server is the suite's own: its template is kept between runs (a new migration
// makes a new one). On a shared external server each run makes its own and drops it afterwards.
const fingerprint = migrationsFingerprint();
const template = externalServerUrl
  ? `pack_template_${fingerprint}_${randomBytes(3).toString('hex')}`
  : `pack_template_${fingerprint}`;
await withClient(serverUrl, async (client) => {
  const { rows } = await client.query<{ datname: string }>(
    "select datname from pg_database where datname like 'pack\\_t%'",
  );
  for (const { datname } of rows) {
    // Leftovers of an interrupted run, on the suite's own server only.
    if (!externalServerUrl && datname !== template) await client.query(`drop database "${datname}" with (force)`);
  }
  if (!rows.some((row) => row.datname === template)) {
    await client.query(`create database "${template}"`);
    const database = await openDatabase(
      loadConfig({ NODE_ENV: 'test', DATABASE_URL: databaseUrl(serverUrl, template) }),
      log,
    );
    await database.close();
  }
});
writeSuiteDatabase({ serverUrl, template, embedded: !externalServerUrl });
log.info({ template, ms: Math.round(performance.now() - started) }, 'test database server ready');
