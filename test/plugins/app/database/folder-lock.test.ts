import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { FolderLockedError, lockDataDir } from '../../../../plugins/app/database/folder-lock.js';
import { COMPILED, PROJECT_ROOT } from '../../../support/paths.js';

/**
 * DATA_DIR's lock: one holder at a time, refused at once, released on release() and when its
 * holder dies, SIGKILL included. Starts racing on a folder, through server.ts processes, are in
 * embedded-postgres-processes.test.ts.
 */

const log = pino({ level: 'silent' });

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'pack-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('one holder at a time; a refusal names the holder; release lets the next in', async (t) => {
  const dir = tempDir(t);
  const first = await lockDataDir(dir, log);
  t.ok(first, 'flock(1) is installed here');
  const started = Date.now();
  await t.rejects(lockDataDir(dir, log), {
    name: 'EmbeddedPostgresError',
    message: new RegExp(`^DATA_DIR ${dir} is in use: process ${process.pid} holds its lock`),
  });
  t.ok(Date.now() - started < 5000, 'refused at once, not after a wait');
  await first?.release();
  await first?.release();
  const second = await lockDataDir(dir, log);
  t.ok(second, 'taken again after the release');
  await second?.release();
});

t.test('a holder killed with SIGKILL does not block the next lock', async (t) => {
  const dir = tempDir(t);
  const holder = spawn(
    process.execPath,
    [
      ...(COMPILED ? [] : ['--import', 'tsx']),
      '--input-type=module',
      '-e',
      `import { lockDataDir } from '${COMPILED ? './.build/plugins/app/database/folder-lock.js' : './plugins/app/database/folder-lock.ts'}';
       import { pino } from 'pino';
       await lockDataDir(${JSON.stringify(dir)}, pino({ level: 'silent' }));
       console.log('held');
       setInterval(() => {}, 1000);`,
    ],
    { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.teardown(() => holder.kill('SIGKILL'));
  const [chunk] = (await once(holder.stdout, 'data')) as [Buffer];
  t.equal(chunk.toString().trim(), 'held');
  const refused = await lockDataDir(dir, log).catch((error: unknown) => error);
  t.type(refused, FolderLockedError);
  t.match((refused as Error).message, `process ${holder.pid} holds its lock`);

  holder.kill('SIGKILL');
  await once(holder, 'exit');
  const started = Date.now();
  let lock: Awaited<ReturnType<typeof lockDataDir>>;
  // The helper notices the end of its pipe within milliseconds; a few tries allow for a loaded machine.
  for (;;) {
    try {
      lock = await lockDataDir(dir, log);
      break;
    } catch (error) {
      if (!(error instanceof FolderLockedError) || Date.now() - started > 5000) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  t.ok(lock, `taken ${Date.now() - started} ms after the holder died`);
  await lock?.release();
});
