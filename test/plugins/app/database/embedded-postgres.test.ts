import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import t from 'tap';
import { isAlive } from '../../../../plugins/app/database/embedded-postgres.js';
import { bearer, buildTestApp, tokenFor } from '../../../support/app.js';
import { postmasterPid, tempDataDir, waitFor } from '../../../support/server-process.js';
import { onlyEmbedded } from '../../../support/suites.js';

/**
 * The embedded PostgreSQL in DATA_DIR, in process: created on first start, kept across restarts,
 * one server per folder, stale pid files and foreign servers handled. The same through `server.ts`
 * processes (killed, restarted, in containers) is in the embedded-postgres-*.test.ts files beside
 * this one.
 */

t.test('a new data folder gets a cluster; rows survive a restart; close stops the server', onlyEmbedded, async (t) => {
  const dataDir = tempDataDir(t);
  const first = await buildTestApp({ teardown: () => {} }, { DATA_DIR: dataDir });
  t.equal(first.db.engine, 'embedded');
  t.ok(existsSync(join(dataDir, 'postgres', 'PG_VERSION')), 'initdb made the cluster in DATA_DIR/postgres');
  const pid = postmasterPid(dataDir) as number;
  t.ok(pid && isAlive(pid), 'the server runs');
  const res = await first.inject({ url: '/api/user', headers: bearer(tokenFor('dora', { name: 'Dora' })) });
  t.equal(res.statusCode, 200);
  await first.close();
  t.notOk(isAlive(pid), 'closing the app stopped the server');
  t.notOk(existsSync(join(dataDir, 'postgres', 'postmaster.pid')), 'and it shut down cleanly (no pid file left)');

  const second = await buildTestApp(t, { DATA_DIR: dataDir });
  t.equal((await second.users.findById('dora'))?.displayName, 'Dora', 'the row committed before the restart is there');
  t.equal((await second.inject({ url: '/api/health/ready' })).json().data.database, 'embedded');
});

t.test('a second app on the same data folder refuses to start and leaves the first alone', onlyEmbedded, async (t) => {
  const dataDir = tempDataDir(t);
  const first = await buildTestApp(t, { DATA_DIR: dataDir });
  await t.rejects(buildTestApp(t, { DATA_DIR: dataDir }), {
    name: 'EmbeddedPostgresError',
    message: new RegExp(`is in use: its PostgreSQL \\(pid \\d+\\) serves process ${process.pid}.*DATABASE_URL`),
  });
  t.equal((await first.inject({ url: '/api/health/ready' })).statusCode, 200, 'the first still serves');
});

t.test('memory:// is a throwaway folder removed when the app closes', onlyEmbedded, async (t) => {
  const app = await buildTestApp({ teardown: () => {} }, { DATA_DIR: 'memory://' });
  const result = (await app.db.orm.execute(sql`select current_setting('data_directory') as setting`)) as unknown as {
    rows: { setting: string }[];
  };
  const folder = result.rows[0]?.setting as string;
  t.match(folder, new RegExp(`^${tmpdir()}/pack-service-`));
  t.ok(existsSync(folder));
  await app.close();
  t.notOk(existsSync(folder), 'removed at close');
});

t.test(
  'a folder holding a PGlite database from an earlier version is refused with what to do',
  onlyEmbedded,
  async (t) => {
    const dataDir = tempDataDir(t);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'PG_VERSION'), '17\n');
    await t.rejects(buildTestApp(t, { DATA_DIR: dataDir }), {
      name: 'EmbeddedPostgresError',
      message: /holds a PGlite database.*Move the folder away/,
    });
  },
);

t.test(
  'a stale postmaster.pid whose pid now belongs to another process is removed, not obeyed',
  onlyEmbedded,
  async (t) => {
    const dataDir = tempDataDir(t);
    const app = await buildTestApp({ teardown: () => {} }, { DATA_DIR: dataDir });
    await app.close();
    // As after a restart in a new container: the pid in the file is alive, but is no server of ours.
    const unrelated = spawn('sleep', ['30']);
    t.teardown(() => unrelated.kill());
    const original = readFileSync(join(dataDir, 'postgres', 'postmaster.opts'), 'utf8');
    writeFileSync(
      join(dataDir, 'postgres', 'postmaster.pid'),
      `${unrelated.pid}\n${join(dataDir, 'postgres')}\n1795360000\n5432\n\n127.0.0.1\n0 0\nready   \n`,
    );
    t.ok(original, 'the cluster has run before');
    const restarted = await buildTestApp(t, { DATA_DIR: dataDir });
    t.equal((await restarted.inject({ url: '/api/health/ready' })).statusCode, 200);
    t.ok(isAlive(unrelated.pid as number), 'the unrelated process was not touched');
    t.not(postmasterPid(dataDir), unrelated.pid);
  },
);

for (const startedWith of ['-D', 'PGDATA'] as const) {
  t.test(`a PostgreSQL that this service did not start (${startedWith}) is never stopped`, onlyEmbedded, async (t) => {
    const dataDir = tempDataDir(t);
    const app = await buildTestApp({ teardown: () => {} }, { DATA_DIR: dataDir });
    await app.close();
    const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
      postgres: string;
    };
    const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const cluster = join(dataDir, 'postgres');
    // With PGDATA the command line names no folder: the service cannot tell which one it serves.
    const folder = startedWith === '-D' ? ['-D', cluster] : [];
    const command = [
      ...asPostgres,
      postgres,
      ...folder,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
    ];
    // In a process group of its own: runuser does not pass SIGINT on, so the group is signalled.
    const foreign = spawn(command[0] as string, command.slice(1), {
      stdio: 'ignore',
      detached: true,
      env: { PATH: process.env.PATH, PGDATA: cluster },
    });
    t.teardown(async () => {
      if (foreign.exitCode !== null || foreign.signalCode !== null) return;
      const exited = once(foreign, 'exit');
      const signalGroup = (signal: NodeJS.Signals) => {
        try {
          process.kill(-(foreign.pid as number), signal);
        } catch {
          // The group has already gone.
        }
      };
      signalGroup('SIGINT');
      const stuck = setTimeout(() => signalGroup('SIGKILL'), 10_000);
      await exited;
      clearTimeout(stuck);
    });
    await waitFor(
      () =>
        postmasterPid(dataDir) !== undefined && readFileSync(join(cluster, 'postmaster.pid'), 'utf8').includes('ready'),
      'the foreign server',
    );
    const foreignPid = postmasterPid(dataDir) as number;
    await t.rejects(buildTestApp(t, { DATA_DIR: dataDir }), {
      name: 'EmbeddedPostgresError',
      message: /did not start.*pg_ctl stop -D/,
    });
    t.ok(isAlive(foreignPid), 'it still runs');
    t.equal(postmasterPid(dataDir), foreignPid, 'and its pid file is untouched');
  });
}
