import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { EmbeddedPostgresError } from './embedded-binaries.js';

/**
 * One service process per DATA_DIR: an exclusive lock on `DATA_DIR/pack-service.lock`, taken
 * before the start looks at the folder (a new cluster, an orphaned server to stop) and held for
 * the server's life, so that two starts never inspect, stop or start a server on one folder at
 * the same time. The loser is refused at once.
 *
 * Why flock(1) in a helper process: Node has no flock(), and the lock must vanish when its holder
 * dies, SIGKILL included, without a stale file for the next start to judge. Lock files made with
 * O_EXCL (lockfile, proper-lockfile) need that judgement (a pid or an age): two starts judging
 * one stale file at once both win, or a killed holder blocks starts until the file ages out.
 * Native bindings of flock or fcntl (fs-ext, os-lock) need a build step at install. flock(1)
 * (util-linux, or BusyBox) holds a real kernel lock on the file: the helper waits on a pipe from
 * this process, so when this process ends, however it ends, the pipe closes, the helper exits and
 * the kernel drops the lock. Being a lock on a file, it also holds between containers that share
 * the folder. The file itself is never removed: removing a lock file that others may have open
 * would let two holders lock two different files.
 */

export const LOCK_FILE = 'pack-service.lock';
/** flock(1) exits with 1 when `-n` finds the lock taken. */
const LOCK_TAKEN = 1;

export interface FolderLock {
  /** Drops the lock (once the folder's server has stopped). */
  release(): Promise<void>;
}

/** Another process holds the folder's lock: it is starting, serving or stopping a server there. */
export class FolderLockedError extends EmbeddedPostgresError {
  constructor(dataDir: string, lockFile: string, holder: number | undefined) {
    super(
      `DATA_DIR ${dataDir} is in use: ${holder ? `process ${holder}` : 'another process'} holds its lock (${lockFile}). Stop that process, choose another DATA_DIR, or share one PostgreSQL server between instances with DATABASE_URL.`,
    );
  }
}

/** The pid the holder wrote into the lock file, if that process is running. */
async function holderPid(lockFile: string): Promise<number | undefined> {
  const pid = Number((await readFile(lockFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolveExit) => child.once('close', (code) => resolveExit(code)));
}

/**
 * Takes the lock on `dataDir` or throws `DATA_DIR ... is in use` at once. Without flock(1) on the
 * system (macOS has none unless installed), it warns and returns undefined: PostgreSQL's own
 * `postmaster.pid` check is then the only guard, as it was before.
 */
export async function lockDataDir(dataDir: string, log: FastifyBaseLogger): Promise<FolderLock | undefined> {
  const lockFile = join(dataDir, LOCK_FILE);
  // `exec cat` waits for the end of its input: the pipe from this process. Its own session, so a
  // Ctrl-C to the terminal's job does not end it before the service has stopped its server.
  const helper = spawn('flock', ['-x', '-n', lockFile, '-c', 'echo locked; exec cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { PATH: process.env.PATH ?? '' },
  });
  // Writing to a helper that has gone (its pipe broken) must not crash this process.
  helper.stdin?.on('error', () => {});
  const outcome = await new Promise<{ locked: true } | { locked: false; error?: Error; stderr: string }>((settle) => {
    let stdout = '';
    let stderr = '';
    helper.stdout?.setEncoding('utf8');
    helper.stderr?.setEncoding('utf8');
    helper.stdout?.on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('locked')) settle({ locked: true });
    });
    helper.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    helper.once('error', (error) => settle({ locked: false, error, stderr }));
    helper.once('close', (code) =>
      settle({
        locked: false,
        stderr,
        error: code === LOCK_TAKEN && !stderr.trim() ? undefined : new Error(`flock exited with ${code}`),
      }),
    );
  });
  if (!outcome.locked) {
    if ((outcome.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
      log.warn(
        { dataDir },
        'flock(1) is not installed: starts on this DATA_DIR are not serialized (install util-linux to have them)',
      );
      return undefined;
    }
    if (outcome.error) {
      throw new EmbeddedPostgresError(
        `Cannot lock DATA_DIR ${dataDir} (${lockFile}): ${outcome.stderr.trim() || outcome.error.message}`,
      );
    }
    throw new FolderLockedError(dataDir, lockFile, await holderPid(lockFile));
  }
  // Only for the message of a start refused meanwhile; the lock is the kernel's, not this content.
  await writeFile(lockFile, `${process.pid}\n`);
  // The lock must not keep a script that forgot to stop the server alive, nor end it.
  helper.unref();
  for (const stream of [helper.stdin, helper.stdout, helper.stderr]) (stream as Socket | null)?.unref?.();

  let released: Promise<void> | undefined;
  return {
    release: () => {
      released ??= (async () => {
        await writeFile(lockFile, '').catch(() => {});
        helper.stdin?.end();
        const timer = setTimeout(() => helper.kill('SIGKILL'), 5000);
        await exited(helper);
        clearTimeout(timer);
      })();
      return released;
    },
  };
}
