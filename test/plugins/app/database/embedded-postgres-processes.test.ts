import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { isAlive } from '../../../../plugins/app/database/embedded-postgres.js';
import { bearer, tokenFor } from '../../../support/app.js';
import { postmasterPid, startServerProcess, tempDataDir, waitFor } from '../../../support/server-process.js';
import { onlyEmbedded } from '../../../support/suites.js';

/**
 * Each test starts up to three server processes, one after another, each running initdb or
 * stopping an orphan and migrating: under the whole suite (four files at once on two cores) that
 * takes more than a subtest's default 30 s.
 */
const processTest = { ...onlyEmbedded, timeout: 120_000 };

/**
 * `server.ts` processes on one DATA_DIR, as `npm start` runs them: a second process refused, two
 * racing on a new folder, a server orphaned by a SIGKILL stopped by the next start, and two starts
 * racing on a folder left with an orphan.
 */

t.test('a second server process on the same data folder exits 1 with a clear message', processTest, async (t) => {
  const dataDir = tempDataDir(t);
  const first = startServerProcess({ DATA_DIR: dataDir });
  t.teardown(() => first.stop());
  await first.listening;
  const second = startServerProcess({ DATA_DIR: dataDir });
  t.equal((await second.exited).code, 1);
  t.match(second.output(), /DATA_DIR .* is in use: its PostgreSQL \(pid \d+\) serves process \d+/);
  t.notMatch(second.output(), /\n\s+at /, 'a sentence, not a stack trace');
  t.equal((await fetch(`${await first.listening}/api/health/ready`)).status, 200, 'the first still serves');
  first.child.kill('SIGTERM');
  t.equal((await first.exited).code, 0);
});

t.test('two server processes starting together on a new folder: one serves, one refuses', processTest, async (t) => {
  const dataDir = tempDataDir(t);
  const both = [startServerProcess({ DATA_DIR: dataDir }), startServerProcess({ DATA_DIR: dataDir })];
  t.teardown(() => Promise.all(both.map((server) => server.stop())));
  const outcomes = await Promise.all(
    both.map((server) =>
      Promise.race([server.listening.then(() => 'serving'), server.exited.then(({ code }) => `exited ${code}`)]),
    ),
  );
  t.same([...outcomes].sort(), ['exited 1', 'serving'], outcomes.join(', '));
  const loser = both.find((_server, index) => outcomes[index] !== 'serving') ?? both[1];
  t.match(loser?.output(), /is in use/);
});

t.test(
  'after a SIGKILL, the next start stops the orphaned server, says so, and has the data',
  processTest,
  async (t) => {
    const dataDir = tempDataDir(t);
    const killed = startServerProcess({ DATA_DIR: dataDir });
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

    const next = startServerProcess({ DATA_DIR: dataDir });
    t.teardown(() => next.stop());
    const nextUrl = await next.listening;
    t.match(next.output(), /ended without stopping it.*stopping it before starting a new one/);
    t.match(next.output(), /the orphaned server stopped cleanly/);
    await waitFor(() => !isAlive(orphan), 'the orphan to be gone');
    t.not(postmasterPid(dataDir), orphan, 'a new server serves the folder');
    const user = await fetch(`${nextUrl}/api/user`, { headers: bearer(tokenFor('erin')) });
    t.equal(
      ((await user.json()) as { data: { displayName: string } }).data.displayName,
      'Erin before the kill',
      'the acknowledged write survived',
    );
    next.child.kill('SIGTERM');
    t.equal((await next.exited).code, 0);
    t.notOk(existsSync(join(dataDir, 'postgres', 'postmaster.pid')), 'SIGTERM stopped PostgreSQL too');
  },
);

t.test(
  'two starts at once on a folder left with an orphaned server: one stops the orphan and serves, the other is refused at once',
  processTest,
  async (t) => {
    const dataDir = tempDataDir(t);
    const killed = startServerProcess({ DATA_DIR: dataDir });
    await killed.listening;
    const orphan = postmasterPid(dataDir) as number;
    killed.child.kill('SIGKILL');
    await killed.exited;
    t.ok(isAlive(orphan), 'PostgreSQL outlives the killed process');

    const startedAt = Date.now();
    const both = [startServerProcess({ DATA_DIR: dataDir }), startServerProcess({ DATA_DIR: dataDir })];
    t.teardown(() => Promise.all(both.map((server) => server.stop())));
    const outcomes = await Promise.all(
      both.map((server) =>
        Promise.race([server.listening.then(() => 'serving'), server.exited.then(({ code }) => `exited ${code}`)]),
      ),
    );
    t.same([...outcomes].sort(), ['exited 1', 'serving'], outcomes.join(', '));
    const winner = both[outcomes.indexOf('serving')];
    const loser = both[outcomes.indexOf('exited 1')];
    if (!winner || !loser) return;
    const refusedAfter = (await loser.exited).at - startedAt;
    t.ok(refusedAfter < 20_000, `the loser exited ${refusedAfter} ms after both started, without waiting on the other`);
    t.match(loser.output(), /DATA_DIR .* is in use: /);
    t.notMatch(loser.output(), /\n\s+at /, 'a sentence, not a stack trace');
    t.notMatch(loser.output(), /stopping it|pg_ctl/, 'the loser never touched the orphan');
    t.match(winner.output(), /ended without stopping it.*stopping it before starting a new one/);
    t.equal((await fetch(`${await winner.listening}/api/health/ready`)).status, 200, 'the winner serves');
    t.not(postmasterPid(dataDir), orphan, "the winner's own server serves the folder");

    winner.child.kill('SIGTERM');
    t.equal((await winner.exited).code, 0);
    t.match(winner.output(), /the orphaned server stopped cleanly/);
    // Its pid may linger a moment as a zombie until its new parent reaps it.
    await waitFor(() => !isAlive(orphan), 'the orphan to be gone');
    t.notOk(existsSync(join(dataDir, 'postgres', 'postmaster.pid')), 'and no server runs on the folder');
  },
);

t.test(
  'PostgreSQL dying under a running service: logged, requests answer 503, readiness fails',
  processTest,
  async (t) => {
    const dataDir = tempDataDir(t);
    const server = startServerProcess({ DATA_DIR: dataDir });
    t.teardown(() => server.stop());
    const url = await server.listening;
    const postmaster = postmasterPid(dataDir) as number;
    process.kill(postmaster, 'SIGKILL');
    await waitFor(() => /exited unexpectedly/.test(server.output()), 'the log line');
    t.match(server.output(), /"signal":"SIGKILL".*embedded PostgreSQL exited unexpectedly; restart the service/);
    // A backend may answer a last query before it notices its postmaster is gone (under a loaded
    // machine, a few milliseconds after the log line); from then on every request is refused.
    let res = await fetch(`${url}/api/user`, { headers: bearer(tokenFor('after-crash')) });
    for (let tries = 0; res.status === 200 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      res = await fetch(`${url}/api/user`, { headers: bearer(tokenFor('after-crash')) });
    }
    t.equal(res.status, 503);
    t.equal(((await res.json()) as { error: { code: string } }).error.code, 'database_unavailable');
    t.equal((await fetch(`${url}/api/health/ready`)).status, 503, 'readiness says so');
    t.equal((await fetch(`${url}/api/health`)).status, 200, 'the process itself lives on');
  },
);
