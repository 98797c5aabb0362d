import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_ENV, TEST_SECRET } from './app.js';
import { nodeArgsFor, PROJECT_ROOT } from './paths.js';

/** `server.ts` run as its own process, as `npm start` runs it: for shutdown, restart and kill tests. */

export interface ServerProcess {
  child: ChildProcess;
  /** Everything the process logged, stdout and stderr. */
  output(): string;
  /** Resolves with the base URL (`http://127.0.0.1:port`) once the server listens, or rejects if it exits first. */
  listening: Promise<string>;
  /** The exit code (null when a signal ended it) and when it came. */
  exited: Promise<{ code: number | null; at: number }>;
  /**
   * For teardown: SIGTERM, then SIGKILL if it has not exited within 15 s. A SIGKILL alone would
   * leave its embedded PostgreSQL running after the test removed the folder.
   */
  stop(): Promise<void>;
}

/**
 * Starts `server.ts` with a minimal environment plus `env`; `wrap` prefixes the command (for
 * example `unshare` to run it in a PID namespace of its own). `processGroup` makes it the leader
 * of a process group of its own, as a shell does for a job: `process.kill(-pid, signal)` then
 * signals the group, as Ctrl-C in a terminal does.
 */
export function startServerProcess(
  env: Record<string, string>,
  wrap: string[] = [],
  options: { processGroup?: boolean } = {},
): ServerProcess {
  const command = [...wrap, process.execPath, ...nodeArgsFor('server.ts')];
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: PROJECT_ROOT,
    // MAX_EVENT_LOOP_DELAY=0 as in every test app: on a loaded machine the event loop lags by
    // design, and a 503 from the overload guard is not what these tests are about (seen in CI).
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
      DEMO_DATA: 'false',
      AUTH_JWT_SECRET: TEST_SECRET,
      MAX_EVENT_LOOP_DELAY: '0',
      // As in every test app (TEST_ENV): a loaded machine can stall the first ping or the first
      // connection past the production bounds, and a 503 is not what these tests are about (seen in CI).
      DATABASE_WATCH_TIMEOUT: TEST_ENV.DATABASE_WATCH_TIMEOUT as string,
      DATABASE_QUEUE_LIMIT: TEST_ENV.DATABASE_QUEUE_LIMIT as string,
      ...env,
    },
    detached: options.processGroup ?? false,
  });
  let output = '';
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.on('exit', (code) => resolve({ code, at: Date.now() })),
  );
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /API: +(http:\/\/[^/\s"]+)\/api/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(({ code }) => reject(new Error(`server exited with ${code}: ${output.slice(-2000)}`)));
  });
  listening.catch(() => {});
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  return { child, output: () => output, listening, exited, stop };
}

/** A DATA_DIR in a fresh temporary folder, removed at teardown. */
export function tempDataDir(t: { teardown(fn: () => void): void }): string {
  const parent = mkdtempSync(join(tmpdir(), 'pack-data-'));
  // As root, PostgreSQL runs as the `postgres` user, which must reach the folder.
  chmodSync(parent, 0o755);
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  return join(parent, 'data');
}

/** The pid in DATA_DIR's postmaster.pid, if the file is there. */
export function postmasterPid(dataDir: string): number | undefined {
  const file = join(dataDir, 'postgres', 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
