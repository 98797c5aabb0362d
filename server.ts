import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/index.js';

/** Reads the configuration, starts the app and shuts it down gracefully on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env, true);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }

  // Handled from the start: a signal while the app is being built (the embedded PostgreSQL
  // starting, migrations running) waits for it, then closes it, so the database is stopped
  // cleanly instead of being orphaned by the signal's default action.
  let stopping = false;
  const building = buildApp(config);
  // In-flight requests finish (up to 10 s); new ones get 503; the database closes last.
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    stopping = true;
    const built = await building.catch(() => undefined);
    if (!built) {
      // Nothing to close, and no logger yet: a failure during the build is still told.
      if (err) console.error(err);
      return;
    }
    if (err) built.log.error({ err }, 'shutting down after an error');
    else built.log.info({ signal }, 'shutting down');
    await built.close();
  });
  const app = await building;
  if (stopping) return;

  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  app.log.info(`API:        ${base}/api`);
  app.log.info(`Swagger UI: ${base}/docs`);
  if (config.auth.keySource.kind === 'secret' && !config.isProduction) {
    app.log.info('Dev token:  npm run token -- --sub alice [--admin]');
  }
}

/** Failures an operator fixes from the message alone: no stack trace. */
const OPERATOR_ERRORS = new Set(['ConfigError', 'DatabaseStartError', 'EmbeddedPostgresError']);

main().catch((error) => {
  if (error instanceof Error && OPERATOR_ERRORS.has(error.name)) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
