import pino from 'pino';
import { stopEmbeddedPostgres } from '../../plugins/app/database/embedded-postgres.js';
import { readSuiteDatabase, SUITE_DATA_DIR, withClient } from './test-database.js';

// tap's `after` step: the external server loses this run's template; the embedded one stops.
const log = pino({ level: process.env.TEST_DATABASE_LOG_LEVEL ?? 'warn' });
const suite = readSuiteDatabase();
if (suite.embedded) {
  await stopEmbeddedPostgres(SUITE_DATA_DIR, log);
} else {
  await withClient(suite.serverUrl, (client) =>
    client.query(`drop database if exists "${suite.template}" with (force)`),
  );
}
