import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { runningEmbeddedUrl } from '../plugins/app/database/embedded-postgres.js';
import type { Database } from '../plugins/app/database/index.js';
import { findEconomyViolations } from '../plugins/app/invariants/checker.js';
import {
  apiCall,
  BENCH_SERVER_ENV,
  benchDatabase,
  expectOk,
  benchToken,
  databaseKind,
  median,
  percentile,
  processCpuMicros,
  startServer,
} from './lib.js';

/**
 * Buying and opening one hot pack, against the built server on one database:
 *   npm run bench:opens -- --db embedded|external [--users 50] [--packs 10] [--cards 5] [--seconds 10] [--profile DIR]
 *
 * 1. `--users` fans each buy `--packs` packs of one pack (start + complete), all at once:
 *    median and p99 of a purchase (both requests).
 * 2. The same fans open every pack, all at once: every open locks the same pool. Opens a second.
 * 3. The ceiling of the database itself: pgbench at the same concurrency running the smallest
 *    transaction an open needs (lock the pool's rows, decrement one, insert one pull, commit), on
 *    copies of the pack's pool rows, for `--seconds`.
 * 4. The invariants of the economy, checked on the database afterwards.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    users: { type: 'string', default: '50' },
    packs: { type: 'string', default: '10' },
    cards: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '10' },
    profile: { type: 'string' },
  },
});
const kind = databaseKind(values.db);
const users = Number(values.users);
const packsPerUser = Number(values.packs);
const cards = Number(values.cards);
const seconds = Number(values.seconds);
const ENTRIES = 10;
const admin = benchToken({ sub: 'bench-admin', role: 'admin' });
const run = promisify(execFile);

/** Runs `work(i)` for every fan at once; answers the wall-clock milliseconds. */
async function allFans(work: (fan: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  await Promise.all(Array.from({ length: users }, (_, fan) => work(fan)));
  return performance.now() - started;
}

const database = await benchDatabase(kind);
try {
  const server = await startServer(
    { ...database.env, ...BENCH_SERVER_ENV, PURCHASE_RATE_LIMIT: '1000000', CRON_INTERNAL: 'false' },
    3512,
    { profileDir: values.profile },
  );
  try {
    const api = (path: string) => `${server.url}/api${path}`;
    // The hot pack: ENTRIES collectibles with enough copies for every pack bought, price 1.
    const pack = await expectOk(
      'create pack',
      apiCall(api('/admin/packs'), 'POST', admin, { name: 'Hot drop', price: 1, cardsPerPack: cards }),
      201,
    );
    const copies = Math.ceil((users * packsPerUser * cards) / ENTRIES) + cards;
    for (let i = 0; i < ENTRIES; i++) {
      const collectible = await expectOk(
        'create collectible',
        apiCall(api('/admin/collectibles'), 'POST', admin, { name: `Card ${i}`, points: i }),
        201,
      );
      await expectOk(
        'add',
        apiCall(api(`/admin/packs/${pack.id}`), 'POST', admin, {
          action: 'addCollectible',
          collectibleId: collectible.id,
          quantity: copies,
          weight: 1 + (i % 3),
        }),
      );
    }
    await expectOk('publish', apiCall(api(`/admin/packs/${pack.id}`), 'POST', admin, { action: 'publish' }));
    const fans = Array.from({ length: users }, (_, i) => benchToken({ sub: `bench-fan-${i}` }));
    for (const [i, token] of fans.entries()) {
      await expectOk('sign in', apiCall(api('/user'), 'GET', token));
      await expectOk(
        'fund',
        apiCall(api(`/admin/wallets/bench-fan-${i}/adjustments`), 'POST', admin, {
          amount: packsPerUser,
          reason: 'bench',
        }),
        201,
      );
    }

    const purchaseMs: number[] = [];
    const owned: string[][] = fans.map(() => []);
    const purchaseWall = await allFans(async (fan) => {
      const token = fans[fan] as string;
      for (let n = 0; n < packsPerUser; n++) {
        const started = performance.now();
        const purchase = await expectOk('start', apiCall(api(`/packs/${pack.id}/purchase`), 'POST', token), 201);
        const completed = await expectOk(
          'complete',
          apiCall(api(`/packs/${pack.id}/purchase`), 'PUT', token, { purchaseId: purchase.id }),
        );
        purchaseMs.push(performance.now() - started);
        owned[fan]?.push((completed.userPack as { id: string }).id);
      }
    });

    const openMs: number[] = [];
    const cpuBefore = processCpuMicros(server.child.pid as number);
    const openWall = await allFans(async (fan) => {
      for (const userPackId of owned[fan] ?? []) {
        const started = performance.now();
        await expectOk('open', apiCall(api(`/packs/${pack.id}/open`), 'POST', fans[fan] as string, { userPackId }));
        openMs.push(performance.now() - started);
      }
    });
    const opensPerSecond = (openMs.length / openWall) * 1000;
    const serverCpuPerOpen = (processCpuMicros(server.child.pid as number) - cpuBefore) / openMs.length;

    // The database's ceiling, on copies of the pool rows (the service's own rows stay as the opens left them).
    // A connection to the database the server uses, beside it.
    const url = new URL(
      database.env.DATABASE_URL ?? ((await runningEmbeddedUrl(database.env.DATA_DIR as string)) as string),
    );
    const client = new pg.Pool({ connectionString: url.toString(), max: 2 });
    const db = drizzle({ client }) as unknown as Database;
    const sqlText = (text: string) => client.query(text);
    let pgbenchTps = Number.NaN;
    let violations: string[] = [];
    const folder = mkdtempSync(join(tmpdir(), 'pack-pgbench-'));
    try {
      violations = await findEconomyViolations(db);
      const packId = String(pack.id).replace(/'/g, "''");
      await sqlText('drop table if exists bench_pool, bench_pulls');
      await sqlText('create table bench_pool (like pack_pool_entries including all)');
      await sqlText(`insert into bench_pool select * from pack_pool_entries where pack_id = '${packId}'`);
      // Copies enough for any run's length.
      await sqlText('update bench_pool set remaining = 1000000000');
      await sqlText(
        'create table bench_pulls (id bigserial primary key, pack_id text not null, collectible_id text not null, serial_number integer not null)',
      );
      const script = join(folder, 'open.sql');
      writeFileSync(
        script,
        [
          '\\set n random(1, 1000000)',
          'BEGIN;',
          `SELECT collectible_id, remaining FROM bench_pool WHERE pack_id = '${packId}' ORDER BY collectible_id FOR UPDATE;`,
          `UPDATE bench_pool SET remaining = remaining - 1 WHERE pack_id = '${packId}' AND collectible_id = (SELECT min(collectible_id) FROM bench_pool WHERE pack_id = '${packId}');`,
          `INSERT INTO bench_pulls (pack_id, collectible_id, serial_number) VALUES ('${packId}', 'c', :n);`,
          'COMMIT;',
        ].join('\n'),
      );
      const target = [
        '-h',
        url.hostname,
        '-p',
        url.port || '5432',
        '-U',
        decodeURIComponent(url.username) || 'postgres',
        url.pathname.slice(1),
      ];
      const { stdout } = await run(
        'pgbench',
        ['-n', '-c', String(users), '-j', '2', '-T', String(seconds), '-f', script, ...target],
        {
          env: { ...process.env, ...(url.password ? { PGPASSWORD: decodeURIComponent(url.password) } : {}) },
        },
      );
      pgbenchTps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1]);
      await sqlText('drop table bench_pool, bench_pulls');
    } finally {
      rmSync(folder, { recursive: true, force: true });
      await client.end();
    }

    console.log(
      `Hot pack on ${kind} PostgreSQL: ${users} fans, ${packsPerUser} packs each, ${cards} cards a pack (Node ${process.version})\n`,
    );
    console.log('| step | n | per second | median ms | p99 ms |');
    console.log('|---|---|---|---|---|');
    console.log(
      `| purchase (start + complete) | ${purchaseMs.length} | ${((purchaseMs.length / purchaseWall) * 1000).toFixed(0)} | ${median(purchaseMs).toFixed(1)} | ${percentile(purchaseMs, 99).toFixed(1)} |`,
    );
    console.log(
      `| open | ${openMs.length} | ${opensPerSecond.toFixed(0)} | ${median(openMs).toFixed(1)} | ${percentile(openMs, 99).toFixed(1)} |`,
    );
    console.log(`| pgbench: lock pool, decrement one, insert one pull | ${seconds} s | ${pgbenchTps.toFixed(0)} | | |`);
    console.log(
      `\nthe server's CPU time per open: ${(serverCpuPerOpen / 1000).toFixed(2)} ms (${(((serverCpuPerOpen * opensPerSecond) / 1e6) * 100).toFixed(0)}% of one core while opening)`,
    );
    console.log(`opens/s ÷ pgbench ceiling = ${(opensPerSecond / pgbenchTps).toFixed(2)} (bar 0.5, aim 1.0)`);
    console.log(
      `invariant violations: ${violations.length}${violations.length > 0 ? `\n${violations.join('\n')}` : ''}`,
    );
    if (violations.length > 0) process.exitCode = 1;
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
}
