import { spawn, spawnSync } from 'node:child_process';
import autocannon from 'autocannon';

// Load runs against a server: wrk when installed, autocannon otherwise.

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
  return fromAutocannon(
    await autocannon({
      url,
      connections: options.connections,
      duration: options.durationSeconds,
    }),
  );
}

/** An autocannon run's figures, as every load run reports them. */
export function fromAutocannon(result: autocannon.Result): LoadResult {
  return {
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}
