import { parseArgs } from 'node:util';
import { BENCH_SERVER_ENV, benchDatabase, databaseKind, defaultLoadTool, type LoadTool, load, type LoadResult, startReplayServer, startServer } from './lib.js';
import { seedCatalog } from './seed.js';

/**
 * GET /api/packs under load: the built server with
 * `--active` active and `--archived` archived packs, against a bare node:http server replaying
 * the identical response (status, headers, body), side by side in one process tree:
 *   npm run bench:packs -- --db embedded|external [--connections 50] [--duration 10] [--rounds 3] [--tool wrk|autocannon]
 * wrk (`apt-get install wrk`) is the default when installed: autocannon, on the same two cores,
 * saturates before a bare node:http server does, which flatters every ratio.
 * Rounds alternate service and reference so machine noise hits both alike.
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
  },
});
const tool: LoadTool = values.tool === 'autocannon' || values.tool === 'wrk' ? values.tool : defaultLoadTool();
const kind = databaseKind(values.db);
const connections = Number(values.connections);
const durationSeconds = Number(values.duration);
const rounds = Number(values.rounds);

const database = await benchDatabase(kind);
try {
  const db = await database.open();
  await seedCatalog(db, { active: Number(values.active), archived: Number(values.archived) });
  await db.close();

  // The rate limiter stays on (its cost is part of the figure) with a limit no benchmark reaches.
  const server = await startServer({ ...database.env, ...BENCH_SERVER_ENV, LOG_LEVEL: String(values['log-level']) }, 3501);
  const replay = await startReplayServer(`${server.url}/api/packs`, 3502);
  try {
    const serviceUrl = `${server.url}/api/packs`;
    const referenceUrl = 'http://127.0.0.1:3502/api/packs';
    await load(serviceUrl, { connections, durationSeconds: 2, tool });
    await load(referenceUrl, { connections, durationSeconds: 2, tool });

    const service: LoadResult[] = [];
    const reference: LoadResult[] = [];
    for (let round = 0; round < rounds; round++) {
      service.push(await load(serviceUrl, { connections, durationSeconds, tool }));
      reference.push(await load(referenceUrl, { connections, durationSeconds, tool }));
    }
    const mean = (results: LoadResult[], key: keyof LoadResult) => results.reduce((sum, r) => sum + r[key], 0) / results.length;
    const ratio = mean(service, 'requestsPerSecond') / mean(reference, 'requestsPerSecond');
    console.log(`GET /api/packs on ${kind}: ${values.active} active + ${values.archived} archived packs, body ${replay.bytes} bytes,`);
    console.log(`${tool}, ${connections} connections, ${rounds} x ${durationSeconds} s per side, LOG_LEVEL=${values['log-level']}, Node ${process.version}\n`);
    console.log('| server | req/s (mean) | p50 ms | p99 ms (worst round) | non-2xx | errors |');
    console.log('|---|---|---|---|---|---|');
    for (const [name, results] of [['service', service], ['bare node:http replay', reference]] as const) {
      console.log(
        `| ${name} | ${Math.round(mean(results, 'requestsPerSecond'))} | ${mean(results, 'p50').toFixed(1)} | ${Math.max(...results.map((r) => r.p99))} | ${results.reduce((s, r) => s + r.non2xx, 0)} | ${results.reduce((s, r) => s + r.errors, 0)} |`,
      );
    }
    console.log(`\nratio service / bare: ${ratio.toFixed(2)} (rounds: ${service.map((s, i) => (s.requestsPerSecond / (reference[i] as LoadResult).requestsPerSecond).toFixed(2)).join(', ')})`);
  } finally {
    replay.server.close();
    await server.stop();
  }
} finally {
  await database.cleanup();
}
