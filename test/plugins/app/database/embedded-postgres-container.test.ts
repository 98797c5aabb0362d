import { spawnSync } from 'node:child_process';
import t from 'tap';
import { bearer, tokenFor } from '../../../support/app.js';
import { postmasterPid, startServerProcess, tempDataDir } from '../../../support/server-process.js';
import { onlyEmbedded } from '../../../support/suites.js';

/**
 * In a container the service is PID 1 of its own PID namespace, and a restart gets the same pids:
 * a pid file left by a killed container names a live process that is not our server.
 */

const containers =
  process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
t.test(
  'in a container killed with SIGKILL, the restart (same pids, new namespace) starts on the folder',
  onlyEmbedded.skip ? onlyEmbedded : containers ? {} : { skip: 'needs root and unshare(1) to make PID namespaces' },
  async (t) => {
    const dataDir = tempDataDir(t);
    const container = ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child'];
    const pids: number[] = [];
    for (let round = 1; round <= 2; round++) {
      const server = startServerProcess({ DATA_DIR: dataDir }, container);
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
    const last = startServerProcess({ DATA_DIR: dataDir });
    t.teardown(() => last.stop());
    const url = await last.listening;
    for (const round of [1, 2]) {
      const res = await fetch(`${url}/api/user`, { headers: bearer(tokenFor(`round-${round}`)) });
      t.equal(res.status, 200, `round ${round}'s user is there`);
    }
    last.child.kill('SIGTERM');
    t.equal((await last.exited).code, 0);
  },
);
