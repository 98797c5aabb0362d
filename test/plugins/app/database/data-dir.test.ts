import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { DataDirLockedError, LOCK_FILE_NAME, lockDataDir } from '../../../../plugins/app/database/data-dir-lock.js';
import { bearer, buildTestApp, tokenFor } from '../../../support/app.js';

/** PGlite on disk: the folder lock, start from the template, data surviving a restart. */

const projectRoot = new URL('../../../..', import.meta.url).pathname;

function tempDataDir(t: { teardown(fn: () => void): void }): string {
  const parent = mkdtempSync(join(tmpdir(), 'pack-data-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  return join(parent, 'data');
}

t.test('a new data folder starts from the migrated template and keeps rows across a restart', async (t) => {
  const dataDir = tempDataDir(t);
  const first = await buildTestApp({ teardown: () => {} }, { DATA_DIR: dataDir });
  t.ok(existsSync(join(dataDir, 'PG_VERSION')), 'PGlite wrote its folder');
  t.ok(existsSync(join(dataDir, LOCK_FILE_NAME)), 'the lock is held');
  const res = await first.inject({ url: '/api/user', headers: bearer(tokenFor('dora', { name: 'Dora' })) });
  t.equal(res.statusCode, 200);
  await first.close();
  t.notOk(existsSync(join(dataDir, LOCK_FILE_NAME)), 'the lock is released on close');

  const second = await buildTestApp(t, { DATA_DIR: dataDir });
  const user = await second.users.findById('dora');
  t.equal(user?.displayName, 'Dora', 'the row committed before the restart is there');
});

t.test('a second app on the same data folder refuses to start', async (t) => {
  const dataDir = tempDataDir(t);
  await buildTestApp(t, { DATA_DIR: dataDir });
  await t.rejects(buildTestApp(t, { DATA_DIR: dataDir }), { name: 'DataDirLockedError', message: /in use by process/ });
});

t.test('a second server process on the same data folder exits with a clear message', async (t) => {
  const dataDir = tempDataDir(t);
  const app = await buildTestApp(t, { DATA_DIR: dataDir });
  t.ok(app.db);
  const child = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', NODE_ENV: 'development' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.equal(code, 1);
  t.match(stderr, /is in use by process \d+/);
  t.match(stderr, /DATABASE_URL/, 'points to PostgreSQL for more than one instance');
});

t.test('a lock left by a process that is gone is taken over', async (t) => {
  const dataDir = tempDataDir(t);
  const dead = spawnSync(process.execPath, ['-e', 'process.exit(0)']);
  t.ok(dead.pid);
  lockDataDir(dataDir)(); // creates the folder
  writeFileSync(
    join(dataDir, LOCK_FILE_NAME),
    JSON.stringify({ pid: dead.pid, hostname: (await import('node:os')).hostname(), startedAt: '2026-01-01T00:00:00Z' }),
  );
  const app = await buildTestApp(t, { DATA_DIR: dataDir });
  t.ok(app.db);
  const holder = JSON.parse(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8'));
  t.equal(holder.pid, process.pid);
});

t.test('a lock held from another host is never stolen', async (t) => {
  const dataDir = tempDataDir(t);
  lockDataDir(dataDir)();
  writeFileSync(
    join(dataDir, LOCK_FILE_NAME),
    JSON.stringify({ pid: 1, hostname: 'another-host', startedAt: '2026-01-01T00:00:00Z' }),
  );
  t.throws(() => lockDataDir(dataDir), DataDirLockedError);
});

t.test('a half-written lock file (writer died before writing) is replaced', async (t) => {
  const dataDir = tempDataDir(t);
  lockDataDir(dataDir)();
  writeFileSync(join(dataDir, LOCK_FILE_NAME), '');
  const release = lockDataDir(dataDir);
  t.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')).pid, process.pid);
  release();
  t.notOk(existsSync(join(dataDir, LOCK_FILE_NAME)));
});
