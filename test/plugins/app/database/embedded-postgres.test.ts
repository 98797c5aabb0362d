import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import t from 'tap';
import { isAlive } from '../../../../plugins/app/database/embedded-postgres.js';
import { bearer, buildTestApp, TEST_SECRET, tokenFor } from '../../../support/app.js';

/**
 * The embedded PostgreSQL in DATA_DIR: created on first start, kept across restarts, one server
 * per folder, and a server orphaned by a killed process found and stopped by the next start.
 */

const projectRoot = new URL('../../../..', import.meta.url).pathname;

/** These start embedded servers of their own, whatever the suite's server: they run in `npm test` only. */
const onlyEmbedded = { skip: process.env.TEST_DATABASE_URL ? 'the embedded server is tested by npm test; test:pg covers the external one' : false };

function tempDataDir(t: { teardown(fn: () => void): void }): string {
  const parent = mkdtempSync(join(tmpdir(), 'pack-data-'));
  // As root, PostgreSQL runs as the `postgres` user, which must reach the folder.
  chmodSync(parent, 0o755);
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  return join(parent, 'data');
}

function postmasterPid(dataDir: string): number | undefined {
  const file = join(dataDir, 'postgres', 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface ServerProcess {
  child: ChildProcess;
  /** Everything the process logged, stdout and stderr. */
  output(): string;
  /** Resolves with the base URL once the server listens, or rejects if it exits first. */
  listening: Promise<string>;
  exited: Promise<number | null>;
}

/** `server.ts` as its own process, as `npm start` runs it; `wrap` prefixes the command (unshare). */
function startServerProcess(dataDir: string, wrap: string[] = []): ServerProcess {
  const command = [...wrap, process.execPath, '--import', 'tsx', 'server.ts'];
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: projectRoot,
    env: {
      PATH: process.env.PATH,
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
      DEMO_DATA: 'false',
      AUTH_JWT_SECRET: TEST_SECRET,
    },
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /API: +(http:\/\/[^/\s"]+)\/api/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`server exited with ${code}: ${output.slice(-2000)}`)));
  });
  listening.catch(() => {});
  return { child, output: () => output, listening, exited };
}

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
  const result = (await app.db.orm.execute(sql`select current_setting('data_directory') as setting`)) as unknown as { rows: { setting: string }[] };
  const folder = result.rows[0]?.setting as string;
  t.match(folder, new RegExp(`^${tmpdir()}/pack-service-`));
  t.ok(existsSync(folder));
  await app.close();
  t.notOk(existsSync(folder), 'removed at close');
});

t.test('a folder holding a PGlite database from an earlier version is refused with what to do', onlyEmbedded, async (t) => {
  const dataDir = tempDataDir(t);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, 'PG_VERSION'), '17\n');
  await t.rejects(buildTestApp(t, { DATA_DIR: dataDir }), { name: 'EmbeddedPostgresError', message: /holds a PGlite database.*Move the folder away/ });
});

t.test('a stale postmaster.pid whose pid now belongs to another process is removed, not obeyed', onlyEmbedded, async (t) => {
  const dataDir = tempDataDir(t);
  const app = await buildTestApp({ teardown: () => {} }, { DATA_DIR: dataDir });
  await app.close();
  // As after a restart in a new container: the pid in the file is alive, but is no server of ours.
  const unrelated = spawn('sleep', ['30']);
  t.teardown(() => unrelated.kill());
  const original = readFileSync(join(dataDir, 'postgres', 'postmaster.opts'), 'utf8');
  writeFileSync(join(dataDir, 'postgres', 'postmaster.pid'), `${unrelated.pid}\n${join(dataDir, 'postgres')}\n1795360000\n5432\n\n127.0.0.1\n0 0\nready   \n`);
  t.ok(original, 'the cluster has run before');
  const restarted = await buildTestApp(t, { DATA_DIR: dataDir });
  t.equal((await restarted.inject({ url: '/api/health/ready' })).statusCode, 200);
  t.ok(isAlive(unrelated.pid as number), 'the unrelated process was not touched');
  t.not(postmasterPid(dataDir), unrelated.pid);
});

t.test('a PostgreSQL that this service did not start is never stopped', onlyEmbedded, async (t) => {
  const dataDir = tempDataDir(t);
  const app = await buildTestApp({ teardown: () => {} }, { DATA_DIR: dataDir });
  await app.close();
  const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const command = [...asPostgres, postgres, '-D', join(dataDir, 'postgres'), '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
  const foreign = spawn(command[0] as string, command.slice(1), { stdio: 'ignore' });
  t.teardown(() => foreign.kill('SIGINT'));
  await waitFor(() => postmasterPid(dataDir) !== undefined && readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').includes('ready'), 'the foreign server');
  const foreignPid = postmasterPid(dataDir) as number;
  await t.rejects(buildTestApp(t, { DATA_DIR: dataDir }), { name: 'EmbeddedPostgresError', message: /did not start.*pg_ctl stop -D/ });
  t.ok(isAlive(foreignPid), 'it still runs');
});

t.test('server processes', onlyEmbedded, async (t) => {
  await t.test('a second server process on the same data folder exits 1 with a clear message', async (t) => {
    const dataDir = tempDataDir(t);
    const first = startServerProcess(dataDir);
    t.teardown(() => first.child.kill('SIGKILL'));
    await first.listening;
    const second = startServerProcess(dataDir);
    t.equal(await second.exited, 1);
    t.match(second.output(), /DATA_DIR .* is in use: its PostgreSQL \(pid \d+\) serves process \d+/);
    t.notMatch(second.output(), /\n\s+at /, 'a sentence, not a stack trace');
    t.equal((await fetch(`${await first.listening}/api/health/ready`)).status, 200, 'the first still serves');
    first.child.kill('SIGTERM');
    t.equal(await first.exited, 0);
  });

  await t.test('two server processes starting together on a new folder: one serves, one refuses', async (t) => {
    const dataDir = tempDataDir(t);
    const both = [startServerProcess(dataDir), startServerProcess(dataDir)];
    t.teardown(() => {
      for (const server of both) server.child.kill('SIGKILL');
    });
    const outcomes = await Promise.all(
      both.map((server) => Promise.race([server.listening.then(() => 'serving'), server.exited.then((code) => `exited ${code}`)])),
    );
    t.same([...outcomes].sort(), ['exited 1', 'serving'], outcomes.join(', '));
    const loser = both.find((_server, index) => outcomes[index] !== 'serving') ?? both[1];
    t.match(loser?.output(), /is in use/);
  });

  await t.test('after a SIGKILL, the next start stops the orphaned server, says so, and has the data', async (t) => {
    const dataDir = tempDataDir(t);
    const killed = startServerProcess(dataDir);
    const url = await killed.listening;
    const put = await fetch(`${url}/api/user`, {
      method: 'PATCH',
      headers: { ...bearer(tokenFor('erin')), 'content-type': 'application/json' },
      body: JSON.stringify({ displayName: 'Erin before the kill' }),
    });
    t.equal(put.status, 200, 'a write acknowledged before the kill');
    const orphan = postmasterPid(dataDir) as number;
    killed.child.kill('SIGKILL');
    await killed.exited;
    t.ok(isAlive(orphan), 'PostgreSQL outlives the killed process');

    const next = startServerProcess(dataDir);
    t.teardown(() => next.child.kill('SIGKILL'));
    const nextUrl = await next.listening;
    t.match(next.output(), /ended without stopping it.*stopping it before starting a new one/);
    t.match(next.output(), /the orphaned server stopped cleanly/);
    await waitFor(() => !isAlive(orphan), 'the orphan to be gone');
    t.not(postmasterPid(dataDir), orphan, 'a new server serves the folder');
    const user = await fetch(`${nextUrl}/api/user`, { headers: bearer(tokenFor('erin')) });
    t.equal(((await user.json()) as { data: { displayName: string } }).data.displayName, 'Erin before the kill', 'the acknowledged write survived');
    next.child.kill('SIGTERM');
    t.equal(await next.exited, 0);
    t.notOk(existsSync(join(dataDir, 'postgres', 'postmaster.pid')), 'SIGTERM stopped PostgreSQL too');
  });

  // A container: the service is PID 1 of its own PID namespace, and a restart gets the same pids.
  const containers = process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
  await t.test(
    'in a container killed with SIGKILL, the restart (same pids, new namespace) starts on the folder',
    containers ? {} : { skip: 'needs root and unshare(1) to make PID namespaces' },
    async (t) => {
      const dataDir = tempDataDir(t);
      const container = ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child'];
      const pids: number[] = [];
      for (let round = 1; round <= 3; round++) {
        const server = startServerProcess(dataDir, container);
        t.teardown(() => server.child.kill('SIGKILL'));
        const url = await server.listening;
        t.match(server.output(), /"pid":1,/, `round ${round}: the service is PID 1 of its namespace`);
        const res = await fetch(`${url}/api/user`, { headers: bearer(tokenFor(`round-${round}`)) });
        t.equal(res.status, 200);
        pids.push(postmasterPid(dataDir) as number);
        // unshare's child is PID 1 inside: killing unshare with --kill-child kills the whole namespace.
        server.child.kill('SIGKILL');
        await server.exited;
      }
      t.comment(`postmaster pids inside the namespaces: ${pids.join(', ')}`);
      const last = startServerProcess(dataDir);
      t.teardown(() => last.child.kill('SIGKILL'));
      const url = await last.listening;
      for (const round of [1, 2, 3]) {
        const res = await fetch(`${url}/api/user`, { headers: bearer(tokenFor(`round-${round}`)) });
        t.equal(res.status, 200, `round ${round}'s user is there`);
      }
      last.child.kill('SIGTERM');
      t.equal(await last.exited, 0);
    },
  );
});
