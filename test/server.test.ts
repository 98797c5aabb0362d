import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { createTestDatabase, tokenFor } from './support/app.js';
import { startServerProcess, tempDataDir, waitFor } from './support/server-process.js';
import { onlyEmbedded } from './support/suites.js';
import { withClient } from './support/test-database.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/**
 * server.ts as a process: graceful shutdown with a request in flight on a connection the client
 * keeps open. It once answered with `Connection: keep-alive`, kept the socket, and was killed by
 * the 10 s timeout (exit 1) without closing the database.
 */

const ADMIN = tokenFor('root', { role: 'admin' });

/** Everything the server sends on the socket until it closes it (or `timeoutMs` passes). */
function readUntilClosed(socket: Socket, timeoutMs: number): Promise<{ data: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    let data = '';
    const timer = setTimeout(() => resolve({ data, closedByServer: false }), timeoutMs);
    socket.on('data', (chunk) => {
      data += chunk;
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve({ data, closedByServer: true });
    });
  });
}

async function halfSentRequestAcrossSigterm(
  t: Test,
  env: Record<string, string>,
  databaseClosed: () => Promise<boolean>,
  how: 'SIGTERM to the process' | 'SIGINT to its process group' = 'SIGTERM to the process',
) {
  const server = startServerProcess(env, [], { processGroup: how === 'SIGINT to its process group' });
  t.teardown(() => server.stop());
  const port = Number(new URL(await server.listening).port);
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const body = JSON.stringify({ name: 'Sent across a SIGTERM' });
  const half = Math.floor(body.length / 2);
  socket.write(
    `POST /api/admin/packs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body.slice(0, half)}`,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const signalled = Date.now();
  if (how === 'SIGTERM to the process') server.child.kill('SIGTERM');
  else process.kill(-(server.child.pid as number), 'SIGINT');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const response = readUntilClosed(socket, 9000);
  socket.write(body.slice(half));

  const { data, closedByServer } = await response;
  t.match(data, /^HTTP\/1\.1 201/, 'the request in flight is answered');
  t.match(data, /\r\nconnection: close\r\n/i, 'with Connection: close');
  t.ok(
    closedByServer,
    'and the server closes the socket once the response is written, though the client keeps it open',
  );
  const { code, at } = await server.exited;
  t.equal(code, 0, 'the process exits 0');
  t.ok(at - signalled < 9000, `within the 10 s grace period (${at - signalled} ms)`);
  t.ok(await databaseClosed(), 'with the database closed');
  t.notMatch(server.output(), /killed by timeout/);
  socket.destroy();
  return server;
}

t.test(
  'SIGTERM with a half-sent request on a kept-open connection: answered, closed, exit 0 (external database)',
  async (t) => {
    const database = await createTestDatabase();
    t.teardown(() => database.drop());
    await halfSentRequestAcrossSigterm(t, { DATABASE_URL: database.url }, async () => {
      const name = new URL(database.url).pathname.slice(1);
      const server = new URL(database.url);
      server.pathname = '/postgres';
      const { rows } = await withClient(server.toString(), (client) =>
        client.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [name]),
      );
      return rows[0]?.n === 0;
    });
  },
);

t.test(
  'SIGTERM with a half-sent request on a kept-open connection: answered, closed, exit 0 (embedded database)',
  onlyEmbedded,
  async (t) => {
    const dataDir = tempDataDir(t);
    const server = await halfSentRequestAcrossSigterm(
      t,
      { DATA_DIR: dataDir },
      async () => !existsSync(join(dataDir, 'postgres', 'postmaster.pid')),
    );
    t.match(server.output(), /embedded PostgreSQL: stopped/, 'stopped by the shutdown, not by the exit hook');
  },
);

t.test(
  'Ctrl-C in a terminal (SIGINT to the whole process group) with a half-sent request: the embedded PostgreSQL outlives it',
  onlyEmbedded,
  async (t) => {
    // The terminal signals every process of the job. PostgreSQL runs in a session of its own, so it
    // keeps serving the request in flight and is stopped by the shutdown, after it.
    const dataDir = tempDataDir(t);
    const server = await halfSentRequestAcrossSigterm(
      t,
      { DATA_DIR: dataDir },
      async () => !existsSync(join(dataDir, 'postgres', 'postmaster.pid')),
      'SIGINT to its process group',
    );
    t.match(server.output(), /embedded PostgreSQL: stopped/);
  },
);

t.test(
  'SIGTERM during or right after a start on the embedded database: exit 0, the database stopped, no error logged',
  onlyEmbedded,
  async (t) => {
    const dataDir = tempDataDir(t);
    // The first start creates the cluster; the later ones are the starts a SIGTERM interrupts.
    const first = startServerProcess({ DATA_DIR: dataDir });
    t.teardown(() => first.stop());
    await first.listening;
    await first.stop();
    const errorLines = (output: string) => output.split('\n').filter((line) => /"level":(50|60)/.test(line));
    // While the app is built (its PostgreSQL just started, migrations to check), and as soon as it listens
    // (the database watch's first connection then often still logging in): twice each.
    for (const moment of [/embedded PostgreSQL: ready/, /embedded PostgreSQL: ready/, /API: /, /API: /]) {
      const server = startServerProcess({ DATA_DIR: dataDir });
      t.teardown(() => server.stop());
      await waitFor(() => moment.test(server.output()), `${moment} in the log`);
      server.child.kill('SIGTERM');
      const { code } = await server.exited;
      t.equal(code, 0, `SIGTERM at ${moment}: exit 0`);
      t.match(
        server.output(),
        /embedded PostgreSQL: stopped/,
        `SIGTERM at ${moment}: the database stopped by the shutdown`,
      );
      t.same(errorLines(server.output()), [], `SIGTERM at ${moment}: nothing logged at error or fatal`);
    }
  },
);
