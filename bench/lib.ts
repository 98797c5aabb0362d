import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createSigner } from 'fast-jwt';
import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { openDatabase, type DatabaseHandle } from '../plugins/app/database/index.js';
import { loadConfig } from '../config/index.js';
import { DATABASE_ENGINES, type DatabaseEngine } from '../schemas/enums.js';
import type { ReferenceKind } from './reference-kinds.js';

/**
 * Shared pieces of the benchmarks: a database to run against (a data folder for the embedded
 * PostgreSQL, or a fresh database on the external server), the built server as a child process,
 * reference servers replaying a recorded response (bench/reference-server.ts), load runs (wrk or
 * autocannon) and CPU time from /proc. Everything talks to 127.0.0.1 only.
 */

export const projectRoot = new URL('..', import.meta.url).pathname;
const BENCH_SECRET = 'bench-secret-that-is-long-enough-0123456789';

/** A token for the server under test, valid for an hour. */
export const benchToken = (claims: { sub: string; role?: 'admin' }) =>
  createSigner({ key: BENCH_SECRET, algorithm: 'HS256', expiresIn: 3_600_000 })(claims);
/** Platform admins carry `role: admin`; the limit is out of reach, so every request is counted but none refused. */
export const BENCH_SERVER_ENV = { AUTH_ADMIN_CLAIM: 'role=admin', RATE_LIMIT_MAX: '1000000000' };

const noop = () => {};
const silent = {
  level: 'silent',
  info: noop,
  warn: noop,
  error: noop,
  debug: noop,
  trace: noop,
  fatal: noop,
  silent: noop,
  child: () => silent,
} as unknown as FastifyBaseLogger;

export type DatabaseKind = DatabaseEngine;

export interface BenchDatabase {
  kind: DatabaseKind;
  env: Record<string, string>;
  open(): Promise<DatabaseHandle>;
  cleanup(): Promise<void>;
}

/** `--db embedded` (the default) or `--db external`; anything else is refused. */
export function databaseKind(value: string | undefined): DatabaseKind {
  if (value === undefined) return 'embedded';
  if ((DATABASE_ENGINES as readonly string[]).includes(value)) return value as DatabaseKind;
  throw new Error(`--db must be embedded or external (got ${value})`);
}

/**
 * A new data folder for the embedded PostgreSQL (the server under test starts it), or a new
 * database on the external PostgreSQL server at `serverUrl`.
 */
export async function benchDatabase(
  kind: DatabaseKind,
  serverUrl = 'postgres://postgres@127.0.0.1:5432/test',
): Promise<BenchDatabase> {
  if (kind === 'embedded') {
    const folder = mkdtempSync(join(tmpdir(), 'pack-bench-'));
    // As root, PostgreSQL runs as the `postgres` user, which must reach the folder.
    chmodSync(folder, 0o755);
    const env = { DATA_DIR: join(folder, 'data') };
    return {
      kind,
      env,
      open: () => openDatabase(loadConfig({ ...env, AUTH_JWT_SECRET: BENCH_SECRET }), silent),
      cleanup: async () => rmSync(folder, { recursive: true, force: true }),
    };
  }
  const name = `pack_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const env = { DATABASE_URL: url.toString() };
  return {
    kind,
    env,
    open: () => openDatabase(loadConfig({ ...env, AUTH_JWT_SECRET: BENCH_SECRET }), silent),
    cleanup: async () => {
      // BENCH_KEEP_DATABASE=1 leaves it for inspection (EXPLAIN, the invariant checker ...).
      if (process.env.BENCH_KEEP_DATABASE) {
        console.error(`kept the database ${name}`);
        return;
      }
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists "${name}" with (force)`);
      await client.end();
    },
  };
}

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
  options: { profileDir?: string } = {},
): Promise<RunningServer> {
  const profiling = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
  const child = spawn(process.execPath, [...profiling, ...PERF_MAP_FLAGS, join(projectRoot, 'dist', 'server.js')], {
    cwd: projectRoot,
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

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export type LoadTool = 'wrk' | 'autocannon';

/** wrk (C, from Debian's `wrk` package) when installed: it needs far less CPU per request than autocannon. */
export function defaultLoadTool(): LoadTool {
  return spawnSync('wrk', ['--version']).error ? 'autocannon' : 'wrk';
}

function parseWrkDuration(value: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!match) return Number.NaN;
  const factor = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as 'us' | 'ms' | 's' | 'm'];
  return Number(match[1]) * factor;
}

/**
 * Pins a process (every thread of it) to one CPU: with the load generator on the other, each
 * server measured gets a core to itself, instead of sharing one with wrk whenever the scheduler
 * puts them together (seen here: the same build read 0.68 and 1.02 of bare Fastify in runs minutes
 * apart, each run steady within itself).
 */
export function pinToCpu(pid: number, cpu: number): void {
  const result = spawnSync('taskset', ['-a', '-cp', String(cpu), String(pid)]);
  if (result.status !== 0) throw new Error(`taskset could not pin ${pid} to CPU ${cpu}: ${result.stderr}`);
}

async function loadWithWrk(
  url: string,
  options: { connections: number; durationSeconds: number; cpu?: number },
): Promise<LoadResult> {
  const output = await new Promise<string>((resolve, reject) => {
    const wrk = ['wrk', '-t1', `-c${options.connections}`, `-d${options.durationSeconds}s`, '--latency', url];
    const child =
      options.cpu === undefined
        ? spawn(wrk[0] as string, wrk.slice(1))
        : spawn('taskset', ['-c', String(options.cpu), ...wrk]);
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}`))));
  });
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? Number.NaN);
  const latency = (percent: string) =>
    parseWrkDuration(new RegExp(`^\\s+${percent}%\\s+(\\S+)`, 'm').exec(output)?.[1] ?? '');
  return {
    requests: number(/(\d+) requests in/),
    requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
    p50: latency('50'),
    p99: latency('99'),
    non2xx: number(/Non-2xx or 3xx responses:\s+(\d+)/) || 0,
    errors: (
      /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)?.slice(1) ?? []
    ).reduce((sum, n) => sum + Number(n), 0),
  };
}

export async function load(
  url: string,
  options: {
    connections: number;
    durationSeconds: number;
    tool?: LoadTool /** wrk only: the CPU it runs on. */;
    cpu?: number;
  },
): Promise<LoadResult> {
  if ((options.tool ?? 'autocannon') === 'wrk') return loadWithWrk(url, options);
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.durationSeconds,
  });
  return {
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Linux's USER_HZ, the unit of /proc/<pid>/stat times, is 100 on every architecture Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, in microseconds) a process has used so far, from /proc: divided by the
 * requests it served, what one request costs that server, whatever the load generator did.
 */
export function processCpuMicros(pid: number): number {
  // proc(5): utime and stime are fields 14 and 15, counted after the command name, which is in
  // parentheses and may itself hold ") ".
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export interface ApiAnswer {
  status: number;
  /** The Retry-After header of a 429 or 503, in seconds. */
  retryAfterSeconds?: number;
  json: { data?: Record<string, unknown> & { id?: string } };
}

/**
 * One API call as a client makes it: a bearer token, JSON in and out, answered within 10 s. A 503
 * `overloaded` is retried after its Retry-After and a random part of a second (up to `tries`, 5 by
 * default), as the API asks of its clients, unless `retryOverloaded` is false (a load test
 * counting the refusals itself).
 */
export async function apiCall(
  url: string,
  method: string,
  token: string,
  body?: unknown,
  options: { retryOverloaded?: boolean; tries?: number; headers?: Record<string, string> } = {},
): Promise<ApiAnswer> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const answer: ApiAnswer = {
      status: res.status,
      retryAfterSeconds: Number(res.headers.get('retry-after')) || undefined,
      json: (await res.json()) as ApiAnswer['json'],
    };
    const overloaded =
      answer.status === 503 && (answer.json as { error?: { code?: string } }).error?.code === 'overloaded';
    if (!overloaded || options.retryOverloaded === false || attempt >= (options.tries ?? 5)) return answer;
    // Up to a second more at random: clients refused together must not all come back together.
    await new Promise((resolve) => setTimeout(resolve, ((answer.retryAfterSeconds ?? 1) + Math.random()) * 1000));
  }
}

/** The answer's data, or an error naming what failed when the status is not `status`. */
export async function expectOk(
  what: string,
  answer: Promise<ApiAnswer>,
  status = 200,
): Promise<Record<string, unknown> & { id: string }> {
  const res = await answer;
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json.data as Record<string, unknown> & { id: string };
}

/** Keep-alive connections for the load loops, as many as the callers open at once. */
const keepAlive = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

export interface LeanAnswer {
  status: number;
  /** The Retry-After header of a 429 or 503, in seconds. */
  retryAfterSeconds?: number;
  body: { data?: Record<string, unknown>; error?: { code?: string } };
}

/**
 * One API call over node:http with a keep-alive agent: what `apiCall` does, at a fraction of
 * fetch's CPU. The load generator shares the machine's two cores with the server and its
 * PostgreSQL, so its own cost per request is part of every figure it measures.
 */
export function leanCall(
  url: string,
  method: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<LeanAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method,
        agent: keepAlive,
        timeout: 30_000,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          ...headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve({
              status: response.statusCode ?? 0,
              retryAfterSeconds: Number(response.headers['retry-after']) || undefined,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as LeanAnswer['body'],
            });
          } catch (error) {
            reject(error);
          }
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`${method} ${url} did not answer within 30 s`)));
    request.on('error', reject);
    request.end(payload);
  });
}
