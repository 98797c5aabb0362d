import { parseArgs } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import {
  BENCH_SERVER_ENV,
  benchDatabase,
  databaseKind,
  defaultLoadTool,
  type LoadTool,
  load,
  type LoadResult,
  pinToCpu,
  processCpuMicros,
  recordResponse,
  startReferenceServer,
  startServer,
} from './lib.js';
import { REFERENCE_KINDS, type ReferenceKind } from './reference-kinds.js';
import { seedCatalog } from './seed.js';

/**
 * GET /api/packs under load: the built server with
 * `--active` active and `--archived` archived packs, against a bare node:http server replaying
 * the identical response (status, headers, body), each in a process of its own:
 *   npm run bench:packs -- --db embedded|external [--connections 50] [--duration 10] [--rounds 3] [--profile DIR] [--unpinned]
 *     [--tool wrk|autocannon] [--references fastify,fastify-rate-limit,fastify-many-routes]
 * `--references` (default `fastify`) adds servers replaying the same response from a bare Fastify
 * app, with and without @fastify/rate-limit (bench/reference-server.ts): what the framework and
 * the limiter cost on their own; with `fastify`, the service's throughput is also given as a
 * share of the bare Fastify app's (the framework's cost set aside).
 * wrk (`apt-get install wrk`) is the default when installed: autocannon, on the same two cores,
 * saturates before a bare node:http server does, which flatters every ratio.
 * Each server's CPU time per request is reported beside its throughput, read from /proc.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    active: { type: 'string', default: '20' },
    archived: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    'log-level': { type: 'string', default: 'info' },
    tool: { type: 'string' },
    references: { type: 'string', default: 'fastify' },
    profile: { type: 'string' },
    unpinned: { type: 'boolean', default: false },
  },
});
const tool: LoadTool = values.tool === 'autocannon' || values.tool === 'wrk' ? values.tool : defaultLoadTool();
const kind = databaseKind(values.db);
const connections = Number(values.connections);
const durationSeconds = Number(values.duration);
const rounds = Number(values.rounds);
const listed = String(values.references).split(',') as ReferenceKind[];
if (listed.some((name) => !REFERENCE_KINDS.includes(name)))
  throw new Error(`--references: a list of ${REFERENCE_KINDS.join(', ')}`);
// Bare node:http always runs, first: every ratio is taken against it.
const referenceKinds: ReferenceKind[] = ['node', ...new Set(listed.filter((name) => name !== 'node'))];
const REFERENCE_NAMES: Record<ReferenceKind, string> = {
  node: 'bare node:http replay',
  fastify: 'bare Fastify replay',
  'fastify-rate-limit': 'bare Fastify + @fastify/rate-limit',
  'fastify-many-routes': 'Fastify, 61 routes in 14 plugins',
};

const database = await benchDatabase(kind);
try {
  const db = await database.open();
  await seedCatalog(db, { active: Number(values.active), archived: Number(values.archived) });
  await db.close();

  // The rate limiter stays on (its cost is part of the figure) with a limit no benchmark reaches.
  const server = await startServer(
    { ...database.env, ...BENCH_SERVER_ENV, LOG_LEVEL: String(values['log-level']) },
    3501,
    { profileDir: values.profile },
  );
  const references: Awaited<ReturnType<typeof startReferenceServer>>[] = [];
  try {
    const recording = await recordResponse(`${server.url}/api/packs`);
    const started = await Promise.allSettled(
      referenceKinds.map((name, index) => startReferenceServer(name, recording, 3502 + index)),
    );
    for (const outcome of started) if (outcome.status === 'fulfilled') references.push(outcome.value);
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const targets: { name: string; url: string; process: ChildProcess }[] = [
      { name: 'service', url: `${server.url}/api/packs`, process: server.child },
      ...referenceKinds.map((name, index) => ({
        name: REFERENCE_NAMES[name],
        url: `http://127.0.0.1:${3502 + index}/api/packs`,
        process: (references[index] as { child: ChildProcess }).child,
      })),
    ];
    // Every server on CPU 1, wrk on CPU 0 (--unpinned: wherever the scheduler puts them).
    const loadCpu = !values.unpinned && tool === 'wrk' ? 0 : undefined;
    if (loadCpu !== undefined) for (const target of targets) pinToCpu(target.process.pid as number, 1);
    for (const target of targets) await load(target.url, { connections, durationSeconds: 2, tool, cpu: loadCpu });

    type Round = LoadResult & { cpuMicrosPerRequest: number };
    const measure = async (target: (typeof targets)[number]): Promise<Round> => {
      const cpuBefore = processCpuMicros(target.process.pid as number);
      const result = await load(target.url, { connections, durationSeconds, tool, cpu: loadCpu });
      return {
        ...result,
        cpuMicrosPerRequest: (processCpuMicros(target.process.pid as number) - cpuBefore) / result.requests,
      };
    };
    // Rounds alternate between the servers, each round starting with the next one, so that the
    // machine's changes of speed hit them alike.
    const results: Round[][] = targets.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (let step = 0; step < targets.length; step++) {
        const index = (round + step) % targets.length;
        results[index]?.push(await measure(targets[index] as (typeof targets)[number]));
      }
    }
    const mean = (of: Round[], key: keyof Round) => of.reduce((sum, r) => sum + r[key], 0) / of.length;
    // targets[0] is the service, targets[1] bare node:http.
    const bare = results[1] as Round[];
    const ratios = (of: Round[]) => {
      const throughput = mean(of, 'requestsPerSecond') / mean(bare, 'requestsPerSecond');
      const perRound = of
        .map((r, i) => (r.requestsPerSecond / (bare[i] as Round).requestsPerSecond).toFixed(2))
        .join(', ');
      const cpu = mean(bare, 'cpuMicrosPerRequest') / mean(of, 'cpuMicrosPerRequest');
      return `${throughput.toFixed(2)} (${perRound}) | ${cpu.toFixed(2)}`;
    };
    console.log(
      `GET /api/packs on ${kind}: ${values.active} active + ${values.archived} archived packs, body ${recording.body.length} bytes,`,
    );
    console.log(
      `${tool}${loadCpu === undefined ? '' : ' on CPU 0, each server pinned to CPU 1'}, ${connections} connections, ${rounds} x ${durationSeconds} s per server, LOG_LEVEL=${values['log-level']}, Node ${process.version}\n`,
    );
    console.log(
      '| server | req/s (mean) | CPU µs per request | ratio to bare node:http (rounds) | CPU ratio | p50 ms | p99 ms (worst round) | non-2xx | errors |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const [index, target] of targets.entries()) {
      const of = results[index] as Round[];
      console.log(
        `| ${target.name} | ${Math.round(mean(of, 'requestsPerSecond'))} | ${mean(of, 'cpuMicrosPerRequest').toFixed(1)} | ${ratios(of)} | ${mean(of, 'p50').toFixed(1)} | ${Math.max(...of.map((r) => r.p99))} | ${of.reduce((s, r) => s + r.non2xx, 0)} | ${of.reduce((s, r) => s + r.errors, 0)} |`,
      );
    }
    console.log('\nCPU ratio: CPU time per request of the bare node:http replay / of the server, from /proc.');
    const fastifyIndex = targets.findIndex((target) => target.name === REFERENCE_NAMES.fastify);
    if (fastifyIndex > 0) {
      // The framework's own cost set aside: what the service's hooks and protections cost on top of it.
      const service = results[0] as Round[];
      const framework = results[fastifyIndex] as Round[];
      const perRound = service.map((r, i) => r.requestsPerSecond / (framework[i] as Round).requestsPerSecond);
      const cpu = mean(framework, 'cpuMicrosPerRequest') / mean(service, 'cpuMicrosPerRequest');
      console.log(
        `\nservice ÷ bare Fastify: **${(mean(service, 'requestsPerSecond') / mean(framework, 'requestsPerSecond')).toFixed(2)}** of its throughput (rounds ${perRound.map((ratio) => ratio.toFixed(2)).join(', ')}), CPU ratio ${cpu.toFixed(2)}`,
      );
    }
  } finally {
    await Promise.all(references.map((reference) => reference.stop()));
    await server.stop();
  }
} finally {
  await database.cleanup();
}
