import { parseArgs } from 'node:util';
import { BENCH_SERVER_ENV, benchDatabase, benchToken, databaseKind, defaultLoadTool, load, type LoadResult, median, percentile, startServer } from './lib.js';
import { seedCatalog } from './seed.js';

/**
 * GET /api/packs while admins write, against the built server:
 *   npm run bench:reads-under-writes -- --db embedded|external [--writes 25] [--duration 8] [--rounds 2]
 * Three phases, alternated `--rounds` times: reads alone; reads while one admin client makes
 * `--writes` pool edits a second on draft packs (building a catalog: no public response changes);
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

/** Writes at a steady rate (one at a time, as an admin UI does) until stopped; their latencies. */
function startWriter(url: string, write: Writer): { stop: () => Promise<{ latencies: number[]; failures: number }> } {
  const latencies: number[] = [];
  let failures = 0;
  let stopped = false;
  const interval = 1000 / writesPerSecond;
  const run = (async () => {
    const started = performance.now();
    for (let i = 0; !stopped; i++) {
      const { method, path, body } = write(i);
      const sent = performance.now();
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - sent);
      if (res.status !== 200) failures++;
      const next = started + (i + 1) * interval;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await run;
      return { latencies, failures };
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
    const draftEdit: Writer = (i) => {
      const packId = seeded.draftIds[Math.floor(i / 2) % seeded.draftIds.length] as string;
      return i % 2 === 0
        ? { method: 'POST', path: `/api/admin/packs/${packId}`, body: { action: 'addCollectible', collectibleId: extra, quantity: 1 + (i % 50) } }
        : { method: 'POST', path: `/api/admin/packs/${packId}`, body: { action: 'removeCollectible', collectibleId: extra } };
    };
    const activeEdit: Writer = (i) => ({
      method: 'PATCH',
      path: `/api/admin/packs/${seeded.activeIds[i % seeded.activeIds.length]}`,
      body: { description: `Edited ${i}` },
    });
    await load(readUrl, { connections, durationSeconds: 2, tool });

    const phases = { alone: [] as LoadResult[], draftWrites: [] as LoadResult[], activeWrites: [] as LoadResult[] };
    const writeLatencies = { draftWrites: [] as number[], activeWrites: [] as number[] };
    let failures = 0;
    for (let round = 0; round < rounds; round++) {
      phases.alone.push(await load(readUrl, { connections, durationSeconds, tool }));
      for (const [phase, write] of [['draftWrites', draftEdit], ['activeWrites', activeEdit]] as const) {
        const writer = startWriter(server.url, write);
        phases[phase].push(await load(readUrl, { connections, durationSeconds, tool }));
        const result = await writer.stop();
        writeLatencies[phase].push(...result.latencies);
        failures += result.failures;
      }
    }
    const mean = (results: LoadResult[]) => results.reduce((sum, r) => sum + r.requestsPerSecond, 0) / results.length;
    const alone = mean(phases.alone);
    console.log(`GET /api/packs on ${kind} while an admin writes ${writesPerSecond}/s; ${tool}, ${connections} connections, ${rounds} x ${durationSeconds} s per phase, Node ${process.version}\n`);
    console.log('| phase | reads/s (mean) | of reads alone | read p99 ms (worst) | writes done | write median ms | write p99 ms |');
    console.log('|---|---|---|---|---|---|---|');
    for (const [name, results] of Object.entries(phases)) {
      const latencies = name === 'alone' ? [] : writeLatencies[name as keyof typeof writeLatencies];
      const writesColumns = latencies.length
        ? `${latencies.length} | ${median(latencies).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)}`
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
