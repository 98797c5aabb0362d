import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { type Binaries, EmbeddedPostgresError, postgresEnvironment, type RunAs } from './embedded-binaries.js';
import { OWNER_SETTING, readPidFile } from './embedded-orphans.js';

/** The PostgreSQL server process: a free port, spawning it until it is ready, its log, waiting for its exit. */

const START_TIMEOUT_MS = 60_000;

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}

export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolveExit) => {
    const timer = setTimeout(() => resolveExit(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolveExit(true);
    });
  });
}

/** The severity of a PostgreSQL log line, mapped to ours (`LOG` and `ERROR` lines are routine). */
function logLine(log: FastifyBaseLogger, line: string): void {
  const severity = /\] (\w+):/.exec(line)?.[1];
  if (severity === 'FATAL' || severity === 'PANIC') log.error({ postgres: line }, 'embedded PostgreSQL');
  else if (severity === 'WARNING') log.warn({ postgres: line }, 'embedded PostgreSQL');
  else log.debug({ postgres: line }, 'embedded PostgreSQL');
}

/** Spawns the server and waits until its pid file says ready; rejects with its last words if it exits. */
export async function spawnServer(
  bin: Binaries,
  clusterDir: string,
  port: number,
  account: RunAs | undefined,
  options: { durable: boolean; detached: boolean; log: FastifyBaseLogger },
): Promise<ChildProcess> {
  // Detached, the server outlives this process: it writes to a log file in the data folder.
  const logFile = options.detached ? openSync(join(dirname(clusterDir), 'postgres.log'), 'a') : undefined;
  const child = spawn(
    bin.postgres,
    [
      '-D',
      clusterDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      // No Unix socket: a long DATA_DIR would overflow the socket path, and TCP on loopback suffices.
      '-c',
      'unix_socket_directories=',
      '-c',
      `${OWNER_SETTING}=${process.pid}`,
      // A throwaway database trades durability for speed. synchronous_commit stays on: without
      // fsync a flush is cheap, and CREATE DATABASE would otherwise wait for the WAL writer.
      ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off']),
    ],
    {
      ...account,
      env: postgresEnvironment(),
      stdio: ['ignore', 'ignore', logFile ?? 'pipe'],
      // A session of its own: Ctrl-C in a terminal signals the whole job, and PostgreSQL must keep
      // serving the requests in flight until the shutdown stops it, after them.
      detached: true,
    },
  );
  if (logFile !== undefined) closeSync(logFile);
  const lastLines: string[] = [];
  let partial = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line) continue;
      lastLines.push(line);
      if (lastLines.length > 20) lastLines.shift();
      logLine(options.log, line);
    }
  });
  child.on('error', () => {});
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (options.detached)
        lastLines.push(
          ...(await readFile(join(dirname(clusterDir), 'postgres.log'), 'utf8')).trim().split('\n').slice(-5),
        );
      throw new EmbeddedPostgresError(
        `PostgreSQL exited while starting (${child.exitCode ?? child.signalCode}): ${lastLines.slice(-5).join(' | ') || 'no output'}`,
      );
    }
    const pidFile = await readPidFile(clusterDir);
    if (pidFile && pidFile.pid === child.pid && pidFile.ready) break;
    if (Date.now() > deadline) {
      // Gone before the caller looks at the folder again, so it does not find its own server there.
      child.kill('SIGQUIT');
      await waitForExit(child, 5000);
      throw new EmbeddedPostgresError(`PostgreSQL did not become ready within ${START_TIMEOUT_MS / 1000} s.`);
    }
    await new Promise((wait) => setTimeout(wait, 20));
  }
  if (options.detached) child.unref();
  return child;
}
