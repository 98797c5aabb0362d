import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { CACHE_FOLDER, MIGRATIONS_FOLDER, PROJECT_ROOT } from './paths.js';

/**
 * initdb alone takes seconds, so a new PGlite database starts from a migrated data folder dumped
 * once (`dumpDataDir`) and loaded (`loadDataDir`) in well under a second. The dump is cached on
 * disk, keyed by the migrations and the PGlite version, so a new migration builds a new one.
 */

function templateKey(): string {
  const hash = createHash('sha256');
  const pglite = JSON.parse(
    readFileSync(join(PROJECT_ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8'),
  ) as { version: string };
  hash.update(`pglite ${pglite.version}\n`);
  const files = readdirSync(MIGRATIONS_FOLDER, { recursive: true, encoding: 'utf8' }).sort();
  for (const file of files) {
    if (!file.endsWith('.sql') && !file.endsWith('_journal.json')) continue;
    hash.update(`${file}\n`).update(readFileSync(join(MIGRATIONS_FOLDER, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

export function templatePath(): string {
  return join(CACHE_FOLDER, `pglite-template-${templateKey()}.tar.gz`);
}

let inProcess: Promise<Blob> | undefined;

/** The migrated template, built on first use and shared by every database this process opens. */
export function pgliteTemplate(): Promise<Blob> {
  inProcess ??= loadOrBuildTemplate().catch((error) => {
    inProcess = undefined;
    throw error;
  });
  return inProcess;
}

async function loadOrBuildTemplate(): Promise<Blob> {
  const path = templatePath();
  try {
    return new Blob([readFileSync(path)]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const pg = await PGlite.create();
  try {
    await migrate(drizzle(pg), { migrationsFolder: MIGRATIONS_FOLDER });
    const dump = await pg.dumpDataDir('gzip');
    const bytes = Buffer.from(await dump.arrayBuffer());
    mkdirSync(CACHE_FOLDER, { recursive: true });
    // Write then rename, so a process reading the cache never sees half a file.
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, bytes);
    renameSync(partial, path);
    return new Blob([bytes]);
  } finally {
    await pg.close();
  }
}
