import { parseArgs } from 'node:util';
import {
  BENCH_SERVER_ENV,
  benchDatabase,
  benchToken,
  databaseKind,
  defaultLoadTool,
  load,
  type LoadResult,
  median,
  percentile,
  startServer,
} from './lib.js';
import { seedCatalog } from './seed.js';

/**
 * GET /api/packs while admins write, against the built server:
 *   npm run bench:reads-under-writes -- --db embedded|external [--writes 25] [--duration 8] [--rounds 2]
 * Three phases, alternated `--rounds` times: reads alone; reads while admins make `--writes`
 * pool edits a second on draft packs (building a catalog: no public response changes);
 * reads while the same rate of writes edits active packs (every write changes the public list,
 * the worst case for the catalog cache). Reports each phase's read rate and its ratio to reads
 * alone, and the writes' latency.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    writes: { type: 'string', default: '25' },
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
  },
});
const kind = databaseKind(values.db);
const writesPerSecond = Number(values.writes);
const durationSeconds = Number(values.duration);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const tool = defaultLoadTool();
const token = benchToken({ sub: 'bench-admin', role: 'admin' });

type Writer = (i: number) => { method: string; path: string; body: unknown };

/** Writes in flight at most: past it the writer skips its missed turns instead of piling up requests. */
const MAX_WRITES_IN_FLIGHT = 10;

interface WriterResult {
  /** Latencies of the writes answered 200. */
  latencies: number[];
  failures: number;
  /** From the first write sent to the last one answered. */
  seconds: number;
}

/**
 * Writes at a steady rate until stopped, each sent on schedule whether or not the previous ones
 * have been answered (several admins at work), at most MAX_WRITES_IN_FLIGHT at once: when the
 * server falls that far behind, the turns missed are skipped, not sent in a burst afterwards.
 * One admin waiting for each answer could not reach 25 a second once a write takes over 40 ms.
 */
function startWriter(url: string, write: Writer): { stop: () => Promise<WriterResult> } {
  const latencies: number[] = [];
  let failures = 0;
  let stopped = false;
  const interval = 1000 / writesPerSecond;
  const inFlight = new Set<Promise<void>>();
  const send = async (i: number) => {
    const { method, path, body } = write(i);
    const sent = performance.now();
    try {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      if (res.status === 200) latencies.push(performance.now() - sent);
      else failures++;
    } catch {
      failures++;
    }
  };
  const started = performance.now();
  const run = (async () => {
    for (let turn = 0; !stopped; turn++) {
      if (inFlight.size >= MAX_WRITES_IN_FLIGHT) {
        await Promise.race(inFlight);
        if (stopped) break;
        turn = Math.max(turn, Math.floor((performance.now() - started) / interval));
      }
      const pending: Promise<void> = send(turn).finally(() => inFlight.delete(pending));
      inFlight.add(pending);
      const next = started + (turn + 1) * interval;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
    }
    await Promise.all(inFlight);
  })();
  return {
    stop: async () => {
      stopped = true;
      await run;
      return { latencies, failures, seconds: (performance.now() - started) / 1000 };
    },
  };
}

const database = await benchDatabase(kind);
try {
  const db = await database.open();
  const seeded = await seedCatalog(db, { active: 20, archived: 2000, drafts: 20 });
  await db.close();
  const server = await startServer({ ...database.env, ...BENCH_SERVER_ENV }, 3521);
  try {
    const readUrl = `${server.url}/api/packs`;
    const [extra] = seeded.collectibleIds as [string];
    // Consecutive writes go to different drafts (writes overlap); each draft alternates adding and
    // removing the same entry.
    const draftEdit: Writer = (i) => {
      const drafts = seeded.draftIds.length;
      const packId = seeded.draftIds[i % drafts] as string;
      return Math.floor(i / drafts) % 2 === 0
        ? {
            method: 'POST',
            path: `/api/admin/packs/${packId}`,
            body: { action: 'addCollectible', collectibleId: extra, quantity: 1 + (i % 50) },
          }
        : {
            method: 'POST',
            path: `/api/admin/packs/${packId}`,
            body: { action: 'removeCollectible', collectibleId: extra },
          };
    };
    const activeEdit: Writer = (i) => ({
      method: 'PATCH',
      path: `/api/admin/packs/${seeded.activeIds[i % seeded.activeIds.length]}`,
      body: { description: `Edited ${i}` },
    });
    await load(readUrl, { connections, durationSeconds: 2, tool });

    const phases = { alone: [] as LoadResult[], draftWrites: [] as LoadResult[], activeWrites: [] as LoadResult[] };
    const writeLatencies = { draftWrites: [] as number[], activeWrites: [] as number[] };
    const writeSeconds = { draftWrites: 0, activeWrites: 0 };
    let failures = 0;
    for (let round = 0; round < rounds; round++) {
      phases.alone.push(await load(readUrl, { connections, durationSeconds, tool }));
      for (const [phase, write] of [
        ['draftWrites', draftEdit],
        ['activeWrites', activeEdit],
      ] as const) {
        const writer = startWriter(server.url, write);
        phases[phase].push(await load(readUrl, { connections, durationSeconds, tool }));
        const result = await writer.stop();
        writeLatencies[phase].push(...result.latencies);
        writeSeconds[phase] += result.seconds;
        failures += result.failures;
      }
    }
    const mean = (results: LoadResult[]) => results.reduce((sum, r) => sum + r.requestsPerSecond, 0) / results.length;
    const alone = mean(phases.alone);
    console.log(
      `GET /api/packs on ${kind} while admins write ${writesPerSecond}/s; ${tool}, ${connections} connections, ${rounds} x ${durationSeconds} s per phase, Node ${process.version}\n`,
    );
    console.log(
      '| phase | reads/s (mean) | of reads alone | read p99 ms (worst) | writes answered 200 per second | write median ms | write p99 ms |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const [name, results] of Object.entries(phases)) {
      const latencies = name === 'alone' ? [] : writeLatencies[name as keyof typeof writeLatencies];
      const seconds = name === 'alone' ? 0 : writeSeconds[name as keyof typeof writeSeconds];
      const writesColumns = latencies.length
        ? `${(latencies.length / seconds).toFixed(1)} | ${median(latencies).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)}`
        : '– | – | –';
      console.log(
        `| ${name} | ${Math.round(mean(results))} | ${(mean(results) / alone).toFixed(2)} | ${Math.max(...results.map((r) => r.p99)).toFixed(2)} | ${writesColumns} |`,
      );
    }
    if (failures > 0) console.log(`\n${failures} writes failed`);
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
}
