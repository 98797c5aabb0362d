import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  type Binaries,
  EmbeddedPostgresError,
  execFileAsync,
  postgresEnvironment,
  type RunAs,
} from './embedded-binaries.js';

/**
 * A server already running on the cluster folder: whose it is (a live service's, an orphan left by
 * a process that died, one this service did not start, or only a stale pid file), read from
 * PostgreSQL's `postmaster.pid` and the process table; and stopping one.
 */

/** Marks servers this service started, with the pid of the process that owns each. */
export const OWNER_SETTING = 'pack_service.owner_pid';
export const STOP_TIMEOUT_MS = 30_000;

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
export async function readPidFile(clusterDir: string): Promise<{ pid: number; ready: boolean } | undefined> {
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

export type ExistingServer =
  | { state: 'none' }
  /** The pid file names a process that is gone or is no PostgreSQL of this folder (a reused pid). */
  | { state: 'stale'; pid: number }
  | { state: 'in-use'; pid: number; ownerPid: number }
  /** Ours, but its owner is gone (killed with SIGKILL, or a detached suite server). */
  | { state: 'orphan'; pid: number; ownerPid: number }
  | { state: 'foreign'; pid: number };

export async function inspectExistingServer(clusterDir: string): Promise<ExistingServer> {
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

export function folderInUse(dataDir: string, server: { pid: number; ownerPid: number }): EmbeddedPostgresError {
  return new EmbeddedPostgresError(
    `DATA_DIR ${dataDir} is in use: its PostgreSQL (pid ${server.pid}) serves process ${server.ownerPid}. Stop that process, choose another DATA_DIR, or share one PostgreSQL server between instances with DATABASE_URL.`,
  );
}

export async function stopWithPgCtl(bin: Binaries, clusterDir: string, account: RunAs | undefined): Promise<void> {
  await execFileAsync(
    bin.pg_ctl,
    ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', String(STOP_TIMEOUT_MS / 1000)],
    {
      ...account,
      env: postgresEnvironment(),
    },
  );
}
