import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { templatePath } from '../plugins/app/database/pglite-template.js';

/**
 * Start-to-ready of the built server (`node dist/server.js`) on PGlite, and what it holds:
 *   npm run bench:startup [-- --runs 5]
 * Scenarios: a fresh data folder with the template cached; a fresh folder with no template yet
 * (first start after `npm ci`: initdb + migrations + dump); a restart on an existing folder; an
 * in-memory database. "Ready" is the first 200 from GET /api/health/ready, timed from spawn.
 * RSS is read from /proc two seconds after ready, with no traffic.
 */

const projectRoot = new URL('..', import.meta.url).pathname;
const serverEntry = join(projectRoot, 'dist', 'server.js');
const runsArg = process.argv.indexOf('--runs');
const runs = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 5;
let nextPort = 3400;

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kib / 1024);
}

async function waitReady(port: number, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health/ready`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('server not ready in time');
}

async function startOnce(dataDir: string): Promise<{ readyMs: number; rss: number }> {
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
    const rss = rssMiB(child.pid as number);
    return { readyMs, rss };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function scenario(name: string, prepare: () => string, before?: () => void) {
  const results: { readyMs: number; rss: number }[] = [];
  for (let i = 0; i < runs; i++) {
    const dataDir = prepare();
    before?.();
    results.push(await startOnce(dataDir));
  }
  const ready = results.map((r) => r.readyMs);
  const rss = results.map((r) => r.rss);
  console.log(
    `| ${name} | ${Math.round(median(ready))} ms | ${Math.round(Math.min(...ready))}–${Math.round(Math.max(...ready))} ms | ${median(rss)} MiB |`,
  );
}

if (!existsSync(serverEntry)) throw new Error('run `npm run build` first (npm run bench:startup does)');
const scratch = mkdtempSync(join(tmpdir(), 'pack-bench-startup-'));
const template = templatePath();
const fresh = () => join(scratch, `fresh-${Math.random().toString(36).slice(2)}`);

try {
  console.log(`Node ${process.version}, ${runs} runs per scenario, median (min–max)\n`);
  console.log('| scenario | start to ready | range | idle RSS |');
  console.log('|---|---|---|---|');
  await scenario('fresh data folder, template cached', fresh);
  const existing = fresh();
  await startOnce(existing);
  await scenario('restart on an existing data folder', () => existing);
  await scenario('in-memory database (memory://)', () => 'memory://');
  // Last, since it replaces the cached template: hide it so the server builds it again.
  await scenario('fresh data folder, no template cached (first start)', fresh, () => {
    if (existsSync(template)) renameSync(template, `${template}.bench-hidden`);
    rmSync(`${template}.bench-hidden`, { force: true });
  });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
