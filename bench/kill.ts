import { parseArgs } from 'node:util';
import pg from 'pg';
import { BENCH_SERVER_ENV, benchDatabase, benchToken, databaseKind, median, type RunningServer, startServer } from './lib.js';

/**
 * SIGKILL under write load, then restart and check, `--kills` times, on one database:
 *   npm run bench:kill -- --db embedded|external [--kills 20] [--writers 8]
 * Writers create collectibles and packs and add collectibles to pools as fast as the server
 * answers; the server is killed with SIGKILL at a random moment, restarted on the same data, and
 * checked: every write the clients saw acknowledged is there, with its audit row; nothing is half
 * applied (no audit row without its change, no change without its audit row, no pool entry of a
 * missing pack or collectible). Last, one SIGTERM under the same load must exit 0.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    kills: { type: 'string', default: '20' },
    writers: { type: 'string', default: '8' },
  },
});
const kind = databaseKind(values.db);
const kills = Number(values.kills);
const writers = Number(values.writers);
const token = benchToken({ sub: 'bench-admin', role: 'admin' });
const PORT = 3531;

interface Acknowledged {
  collectibles: Map<string, string>;
  packs: Map<string, string>;
  /** `${packId}|${collectibleId}` → quantity */
  poolEntries: Map<string, number>;
}

async function call(url: string, method: string, path: string, body: unknown): Promise<{ status: number; json: { data?: { id?: string; pack?: { id: string } } } }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, json: (await res.json()) as never };
}

/** One writer: create a collectible, a pack, and put the one in the other's pool, over and over. */
async function writeUntilDown(url: string, round: number, writer: number, acked: Acknowledged): Promise<number> {
  let done = 0;
  for (let n = 0; ; n++) {
    try {
      const name = `kill-${round}-${writer}-${n}`;
      const collectible = await call(url, 'POST', '/api/admin/collectibles', { name });
      if (collectible.status !== 201) continue;
      acked.collectibles.set(collectible.json.data?.id as string, name);
      const pack = await call(url, 'POST', '/api/admin/packs', { name, cardsPerPack: 1 });
      if (pack.status !== 201) continue;
      acked.packs.set(pack.json.data?.id as string, name);
      const quantity = 1 + (n % 9);
      const added = await call(url, 'POST', `/api/admin/packs/${pack.json.data?.id}`, {
        action: 'addCollectible',
        collectibleId: collectible.json.data?.id,
        quantity,
      });
      if (added.status === 200) acked.poolEntries.set(`${pack.json.data?.id}|${collectible.json.data?.id}`, quantity);
      done += 3;
    } catch {
      return done; // the server is gone
    }
  }
}

async function check(databaseUrl: string, acked: Acknowledged): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const problems: string[] = [];
    const ids = async (sql: string) => new Map((await client.query<{ id: string; value: string }>(sql)).rows.map((row) => [row.id, row.value]));
    const collectibles = await ids('select id, name as value from collectibles');
    const packs = await ids('select id, name as value from packs');
    const pool = await ids(`select pack_id || '|' || collectible_id as id, remaining::text as value from pack_pool_entries`);
    const audited = new Set((await client.query<{ key: string }>("select action || '|' || target_id as key from audit_log")).rows.map((row) => row.key));
    for (const [id, name] of acked.collectibles) if (collectibles.get(id) !== name) problems.push(`lost acknowledged collectible ${id}`);
    for (const [id, name] of acked.packs) if (packs.get(id) !== name) problems.push(`lost acknowledged pack ${id}`);
    for (const [key, quantity] of acked.poolEntries) if (pool.get(key) !== String(quantity)) problems.push(`lost acknowledged pool entry ${key}`);
    // Each change and its audit row commit together: never one without the other.
    for (const id of collectibles.keys()) if (!audited.has(`collectible.create|${id}`)) problems.push(`collectible ${id} without its audit row`);
    for (const id of packs.keys()) if (!audited.has(`pack.create|${id}`)) problems.push(`pack ${id} without its audit row`);
    for (const key of pool.keys()) if (!audited.has(`pack.addCollectible|${key.split('|')[0]}`)) problems.push(`pool entry ${key} without its audit row`);
    for (const key of audited) {
      const [action, target] = key.split('|') as [string, string];
      if (action === 'collectible.create' && !collectibles.has(target)) problems.push(`audit row of a missing collectible ${target}`);
      if (action === 'pack.create' && !packs.has(target)) problems.push(`audit row of a missing pack ${target}`);
    }
    const orphans = await client.query(
      'select 1 from pack_pool_entries e left join packs p on p.id = e.pack_id left join collectibles c on c.id = e.collectible_id where p.id is null or c.id is null',
    );
    if (orphans.rowCount) problems.push(`${orphans.rowCount} pool entries of a missing pack or collectible`);
    return problems;
  } finally {
    await client.end();
  }
}

/** The connection string a check can use: the external database, or the embedded server's (read from its folder). */
async function checkUrl(env: Record<string, string>): Promise<string> {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const cluster = join(env.DATA_DIR as string, 'postgres');
  const port = readFileSync(join(cluster, 'postmaster.pid'), 'utf8').split('\n')[3];
  const password = readFileSync(join(cluster, 'pack-service.password'), 'utf8').trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/pack_service`;
}

const database = await benchDatabase(kind);
try {
  const env = { ...database.env, ...BENCH_SERVER_ENV, LOG_LEVEL: 'error' };
  const acked: Acknowledged = { collectibles: new Map(), packs: new Map(), poolEntries: new Map() };
  const restarts: number[] = [];
  let writes = 0;
  let server: RunningServer = await startServer(env, PORT);
  const allProblems: string[] = [];
  for (let round = 1; round <= kills; round++) {
    const load = Array.from({ length: writers }, (_, writer) => writeUntilDown(server.url, round, writer, acked));
    await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 1200));
    server.child.kill('SIGKILL');
    writes += (await Promise.all(load)).reduce((sum, n) => sum + n, 0);
    const started = performance.now();
    server = await startServer(env, PORT);
    restarts.push(performance.now() - started);
    const problems = await check(await checkUrl(env), acked);
    allProblems.push(...problems.map((problem) => `after kill ${round}: ${problem}`));
    process.stderr.write(`kill ${round}/${kills}: ${acked.collectibles.size} collectibles acknowledged so far, ${problems.length} problems\n`);
  }
  // SIGTERM under the same load: graceful, exit 0.
  const load = Array.from({ length: writers }, (_, writer) => writeUntilDown(server.url, kills + 1, writer, acked));
  await new Promise((resolve) => setTimeout(resolve, 800));
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  const signalled = performance.now();
  server.child.kill('SIGTERM');
  const code = await exited;
  const termMs = performance.now() - signalled;
  await Promise.all(load);
  server = await startServer(env, PORT);
  allProblems.push(...(await check(await checkUrl(env), acked)).map((problem) => `after SIGTERM: ${problem}`));
  await server.stop();

  console.log(`SIGKILL under write load on ${kind}: ${writers} writers, Node ${process.version}\n`);
  console.log('| kills | writes answered | acknowledged creations checked | lost acknowledged writes | invariant violations | restart to ready (median / max) | SIGTERM under load |');
  console.log('|---|---|---|---|---|---|---|');
  const lost = allProblems.filter((problem) => problem.includes('lost')).length;
  console.log(
    `| ${kills} | ${writes} | ${acked.collectibles.size + acked.packs.size + acked.poolEntries.size} | ${lost} | ${allProblems.length - lost} | ${Math.round(median(restarts))} / ${Math.round(Math.max(...restarts))} ms | exit ${code} after ${Math.round(termMs)} ms |`,
  );
  for (const problem of allProblems.slice(0, 20)) console.log(`- ${problem}`);
  if (allProblems.length > 0 || code !== 0) process.exitCode = 1;
} finally {
  await database.cleanup();
}
