import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * PGlite has no lock of its own: two processes on one data folder both start and silently lose
 * committed rows. A lock file created with O_EXCL holds the folder; a lock left by a process
 * that is gone (crash, kill -9) is taken over.
 */

export const LOCK_FILE_NAME = 'pack-service.lock';

export class DataDirLockedError extends Error {
  constructor(dataDir: string, holder: LockHolder) {
    super(
      `The data folder ${dataDir} is in use by process ${holder.pid} on ${holder.hostname} (since ${holder.startedAt}). ` +
        'PGlite serves one process only: stop the other server, use another DATA_DIR, or use DATABASE_URL ' +
        'to share a PostgreSQL server between instances.',
    );
    this.name = 'DataDirLockedError';
  }
}

interface LockHolder {
  pid: number;
  hostname: string;
  startedAt: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(path: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}

/** Takes the folder's lock or throws DataDirLockedError; returns the function that releases it. */
export function lockDataDir(dataDir: string): () => void {
  const folder = resolve(dataDir);
  mkdirSync(folder, { recursive: true });
  const path = join(folder, LOCK_FILE_NAME);
  const me: LockHolder = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };

  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      return () => {
        if (readHolder(path)?.pid === me.pid) unlinkSync(path);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(path);
      // A holder on another host (a shared network folder) cannot be checked: never steal its lock.
      const stale = holder !== undefined && holder.hostname === me.hostname && !isAlive(holder.pid);
      if (holder && !stale) throw new DataDirLockedError(folder, holder);
      // Stale or half-written (the writer died between open and write): remove it and try once more.
      unlinkSync(path);
    }
  }
  throw new DataDirLockedError(folder, readHolder(path) ?? { pid: -1, hostname: '?', startedAt: '?' });
}
