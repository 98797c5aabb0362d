import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import {
  type Binaries,
  EmbeddedPostgresError,
  execFileAsync,
  postgresEnvironment,
  type RunAs,
  SUPERUSER,
} from './embedded-binaries.js';

/** The database cluster in `DATA_DIR/postgres`: created once by initdb, and the service's database in it. */

/** Where the superuser's password is kept: inside the cluster, so it moves with it. */
export const PASSWORD_FILE = 'pack-service.password';

/**
 * initdb into a staging folder renamed into place, so a start killed halfway leaves nothing that
 * looks like a cluster, and of two processes creating one folder's cluster at once one wins.
 */
export async function initCluster(
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

export async function ensureDatabase(url: URL, name: string): Promise<string> {
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
