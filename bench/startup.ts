import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './lib.js';

/**
 * Start-to-ready of the built server (`node dist/server.js`) on the embedded PostgreSQL, and the
 * memory it holds:
 *   npm run bench:startup [-- --runs 5]
 * Scenarios: a first start on a new data folder (initdb, then every migration); a restart on an
 * existing folder; a restart after the previous process was killed with SIGKILL (its orphaned
 * PostgreSQL is found and stopped first); a throwaway `memory://` folder. "Ready" is the first
 * 200 from GET /api/health/ready, timed from spawn. RSS is read from /proc two seconds after
 * ready with no traffic: the Node process (RSS), and every PostgreSQL process of its server (PSS,
 * so shared memory is counted once).
 */

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
const projectRoot = new URL('..', import.meta.url).pathname;
const serverEntry = join(projectRoot, 'dist', 'server.js');
let nextPort = 3400;

function rssKiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Proportional set size: shared pages (PostgreSQL's shared buffers) split between the processes sharing them. */
function pssKiB(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The postmaster of `dataDir` and its children (checkpointer, walwriter, backends, ...). */
function postgresPids(dataDir: string): number[] {
  const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(pidFile)) return [];
  const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

async function waitReady(port: number, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/health/ready`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('server not ready in time');
}

interface Sample {
  readyMs: number;
  nodeMiB: number;
  postgresMiB: number;
  postgresProcesses: number;
}

async function startOnce(dataDir: string, stopWith: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<Sample> {
  const port = nextPort++;
  const started = performance.now();
  const child = spawn(process.execPath, [serverEntry], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', DEMO_DATA: 'false' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitReady(port, child);
    const readyMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    // memory:// lives in a folder the server made: find it through its postmaster.
    const folder = dataDir === 'memory://' ? undefined : dataDir;
    const pids = folder ? postgresPids(folder) : [];
    return {
      readyMs,
      nodeMiB: rssKiB(child.pid as number) / 1024,
      postgresMiB: pids.reduce((sum, pid) => sum + pssKiB(pid), 0) / 1024,
      postgresProcesses: pids.length,
    };
  } finally {
    child.kill(stopWith);
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

async function scenario(
  name: string,
  prepare: () => string,
  options: { before?: (dataDir: string) => Promise<void> } = {},
) {
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    const dataDir = prepare();
    await options.before?.(dataDir);
    samples.push(await startOnce(dataDir));
  }
  const ready = samples.map((s) => s.readyMs);
  const mib = (value: number) => `${Math.round(value)} MiB`;
  const postgres = samples[0]?.postgresProcesses
    ? `${mib(median(samples.map((s) => s.postgresMiB)))} (${samples[0].postgresProcesses} processes)`
    : 'n/a';
  console.log(
    `| ${name} | ${Math.round(median(ready))} ms | ${Math.round(Math.min(...ready))}–${Math.round(Math.max(...ready))} ms | ${mib(median(samples.map((s) => s.nodeMiB)))} | ${postgres} |`,
  );
}

if (!existsSync(serverEntry)) throw new Error('run `npm run build` first (npm run bench:startup does)');
const scratch = mkdtempSync(join(tmpdir(), 'pack-bench-startup-'));
// As root, PostgreSQL runs as the `postgres` user, which must reach the folder.
chmodSync(scratch, 0o755);
const fresh = () => join(scratch, `fresh-${Math.random().toString(36).slice(2)}`);

try {
  console.log(`Node ${process.version}, ${runs} runs per scenario, median (min–max)\n`);
  console.log('| scenario | start to ready | range | Node RSS | PostgreSQL (PSS, all processes) |');
  console.log('|---|---|---|---|---|');
  await scenario('first start on a new data folder (initdb + migrations)', fresh);
  const existing = fresh();
  await startOnce(existing);
  await scenario('restart on an existing data folder', () => existing);
  await scenario('restart after a SIGKILL (the orphaned server is stopped first)', () => existing, {
    before: async (dataDir) => {
      await startOnce(dataDir, 'SIGKILL');
    },
  });
  await scenario('throwaway folder (memory://)', () => 'memory://');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
