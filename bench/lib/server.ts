import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ReferenceKind } from '../reference-kinds.js';
import { BENCH_SECRET } from './credentials.js';

// The built server and the reference servers as child processes, on 127.0.0.1.

export const projectRoot = new URL('../..', import.meta.url).pathname;

export interface RunningServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** With BENCH_PERF_MAP=1, the flags that make a Node process write /tmp/perf-<pid>.map for `perf`. */
const PERF_MAP_FLAGS = process.env.BENCH_PERF_MAP ? ['--perf-basic-prof', '--logfile=/dev/null'] : [];

/**
 * Starts `node dist/server.js` (run `npm run build` first) and waits for readiness. With
 * `profileDir`, the server writes a V8 CPU profile there when it stops (`--cpu-prof`), for
 * `tsx bench/profile-summary.ts <file>`. With BENCH_PERF_MAP=1 in the environment, the server and
 * the reference servers write /tmp/perf-<pid>.map (`--perf-basic-prof`), so that `perf record -p
 * <pid>` names their JavaScript functions (V8's profile attributes time spent in the kernel to the
 * syscall that was running, and says little of where a loopback write's cost goes).
 */
export async function startServer(
  env: Record<string, string>,
  port: number,
  options: { profileDir?: string; root?: string } = {},
): Promise<RunningServer> {
  const profiling = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
  // `root`: another built checkout of the project (a baseline to compare with, in the same run).
  const root = options.root ?? projectRoot;
  const child = spawn(process.execPath, [...profiling, ...PERF_MAP_FLAGS, join(root, 'dist', 'server.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: BENCH_SECRET,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      DEMO_DATA: 'false',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('server not ready within 60 s');
    try {
      if ((await fetch(`${url}/api/health/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

export interface Recording {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One response of `url` as the service sends it: status, headers except the framing ones, and body. */
export async function recordResponse(url: string): Promise<Recording> {
  const recorded = await fetch(url);
  const body = Buffer.from(await recorded.arrayBuffer());
  const headers: Record<string, string> = {};
  recorded.headers.forEach((value, name) => {
    // Framing headers are the server's own business; everything else is replayed as recorded.
    if (!['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name))
      headers[name] = value;
  });
  headers['content-length'] = String(body.length);
  return { status: recorded.status, headers, body };
}

/**
 * A server answering every request with `recording` (bench/reference-server.ts), in a process of
 * its own so that its CPU time can be read apart from everything else's.
 */
export async function startReferenceServer(
  kind: ReferenceKind,
  recording: Recording,
  port: number,
): Promise<{ child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [...PERF_MAP_FLAGS, '--import', 'tsx', join(projectRoot, 'bench', 'reference-server.ts')],
    {
      cwd: projectRoot,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        REFERENCE_KIND: kind,
        PORT: String(port),
        REPLAY: JSON.stringify({
          status: recording.status,
          headers: recording.headers,
          body: recording.body.toString('base64'),
        }),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${kind} reference server exited with ${code}`)));
  });
  child.disconnect();
  return {
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill();
      await exited;
    },
  };
}
