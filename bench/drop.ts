import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { Database } from '../plugins/app/database/index.js';
import { findEconomyViolations } from '../plugins/app/invariants/checker.js';
import {
  apiCall,
  BENCH_SERVER_ENV,
  benchDatabase,
  benchToken,
  databaseKind,
  expectOk,
  leanCall,
  type LeanAnswer,
  median,
  percentile,
  processCpuMicros,
  startServer,
} from './lib.js';
import { checkUrl } from './mixed-load.js';

/**
 * A drop: a crowd of fans on one hot pack, against the built server on one database:
 *   npm run bench:drop -- --db embedded|external [--fans 50] [--starts 20000] [--window 2000]
 *     [--entries 5] [--copies 200000] [--cards 5] [--seconds 10] [--keys] [--profile DIR] [--env KEY=VALUE ...]
 *
 * 0. An admin makes the pack through the API: `--entries` collectibles of `--copies` copies each,
 *    `--cards` a pack, price 1; the publish is timed.
 * 1. Starts: `--fans` fans start purchases as fast as the server answers until `--starts` are
 *    live; the start rate over the first and the last `--window` of them (flatness: the last
 *    window's rate over the first's).
 * 2. Whole purchases with those reservations live: the fans start and complete purchases for
 *    `--seconds`; purchases a second, p50 / p99 of a whole purchase (start + complete).
 * 3. The database's ceiling: pgbench at the same concurrency running the same two transactions
 *    written as small as they can be (lock the pack, insert the reservation, count it; lock the
 *    pack, complete it, debit the wallet with its ledger row, insert the owned pack, count the
 *    sale), on tables of its own in the same database, for `--seconds`.
 * 4. Sold against supply, and every invariant of the economy, checked on the database.
 *
 * Answers shed (503 `overloaded`) are counted, then retried after their Retry-After, as clients
 * are asked to. `--keys` sends an Idempotency-Key with every start and complete. `--profile DIR`
 * writes the server's CPU profile there (see bench/profile-summary.ts).
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    fans: { type: 'string', default: '50' },
    starts: { type: 'string', default: '20000' },
    window: { type: 'string', default: '2000' },
    entries: { type: 'string', default: '5' },
    copies: { type: 'string', default: '200000' },
    cards: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '10' },
    keys: { type: 'boolean', default: false },
    profile: { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const kind = databaseKind(values.db);
const fanCount = Number(values.fans);
const startsWanted = Number(values.starts);
const windowSize = Math.min(Number(values.window), startsWanted);
const entries = Number(values.entries);
const copies = Number(values.copies);
const cards = Number(values.cards);
const seconds = Number(values.seconds);
const serverSettings = Object.fromEntries(
  values.env.map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--env ${pair}: expected KEY=VALUE`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
const admin = benchToken({ sub: 'bench-admin', role: 'admin' });
const run = promisify(execFile);

/** What the fans saw: answers by `step status`, and the 503s they were told to wait out. */
const outcomes = new Map<string, number>();
const tally = (step: string, status: number) =>
  outcomes.set(`${step} ${status}`, (outcomes.get(`${step} ${status}`) ?? 0) + 1);
let shed = 0;

/** A call repeated while it is shed, after Retry-After and a random part of a second. */
async function served(step: string, call: () => Promise<LeanAnswer>): Promise<LeanAnswer> {
  for (;;) {
    const answer = await call();
    tally(step, answer.status);
    if (answer.status !== 503 || answer.body.error?.code !== 'overloaded') return answer;
    shed += 1;
    await new Promise((resolve) => setTimeout(resolve, ((answer.retryAfterSeconds ?? 1) + Math.random()) * 1000));
  }
}

const keyHeaders = (): Record<string, string> => (values.keys ? { 'idempotency-key': randomUUID() } : {});

const database = await benchDatabase(kind);
const profileDir = values.profile;
try {
  const env = {
    ...database.env,
    ...BENCH_SERVER_ENV,
    LOG_LEVEL: 'info',
    PURCHASE_RATE_LIMIT: '1000000000',
    CRON_INTERNAL: 'false',
    ...serverSettings,
  };
  const server = await startServer(env, 3571, { profileDir });
  const serverPid = server.child.pid as number;
  try {
    const api = (path: string) => `${server.url}/api${path}`;
    const pack = await expectOk(
      'create pack',
      apiCall(api('/admin/packs'), 'POST', admin, { name: 'The drop', price: 1, cardsPerPack: cards }),
      201,
    );
    for (let i = 0; i < entries; i++) {
      const collectible = await expectOk(
        'create collectible',
        apiCall(api('/admin/collectibles'), 'POST', admin, { name: `Drop card ${i}` }),
        201,
      );
      await expectOk(
        'add',
        apiCall(api(`/admin/packs/${pack.id}`), 'POST', admin, {
          action: 'addCollectible',
          collectibleId: collectible.id,
          quantity: copies,
        }),
      );
    }
    const publishStarted = performance.now();
    await expectOk(
      'publish',
      apiCall(api(`/admin/packs/${pack.id}`), 'POST', admin, { action: 'publish' }, { tries: 1 }),
    );
    const publishMs = performance.now() - publishStarted;

    const fans = Array.from({ length: fanCount }, (_, i) => benchToken({ sub: `drop-fan-${i}` }));
    for (const [i, token] of fans.entries()) {
      await expectOk('sign in', apiCall(api('/user'), 'GET', token));
      await expectOk(
        'fund',
        apiCall(api(`/admin/wallets/drop-fan-${i}/adjustments`), 'POST', admin, { amount: 1_000_000, reason: 'bench' }),
        201,
      );
    }
    const purchasePath = api(`/packs/${pack.id}/purchase`);
    const start = (token: string) =>
      served('start', () => leanCall(purchasePath, 'POST', token, undefined, keyHeaders()));

    // 1. Starts until `startsWanted` reservations are live.
    const startTimes: number[] = [];
    const startLatencies: number[] = [];
    let issued = 0;
    const startsBegan = performance.now();
    let cpu = { server: processCpuMicros(serverPid), bench: process.cpuUsage() };
    await Promise.all(
      fans.map(async (token) => {
        while (issued < startsWanted) {
          issued += 1;
          const began = performance.now();
          const answer = await start(token);
          if (answer.status !== 201)
            throw new Error(`a start answered ${answer.status}: ${JSON.stringify(answer.body)}`);
          startLatencies.push(performance.now() - began);
          startTimes.push(performance.now());
        }
      }),
    );
    const startCpu = {
      server: (processCpuMicros(serverPid) - cpu.server) / startTimes.length,
      bench: (process.cpuUsage(cpu.bench).user + process.cpuUsage(cpu.bench).system) / startTimes.length,
    };
    const firstRate = (windowSize / ((startTimes[windowSize - 1] as number) - startsBegan)) * 1000;
    const last = startTimes.length - 1;
    const lastRate = (windowSize / ((startTimes[last] as number) - (startTimes[last - windowSize] as number))) * 1000;

    // 2. Whole purchases, with those reservations live.
    const purchaseMs: number[] = [];
    const purchaseTimes: number[] = [];
    let failedPurchases = 0;
    cpu = { server: processCpuMicros(serverPid), bench: process.cpuUsage() };
    const purchasesBegan = performance.now();
    const until = purchasesBegan + seconds * 1000;
    await Promise.all(
      fans.map(async (token) => {
        while (performance.now() < until) {
          const began = performance.now();
          const started = await start(token);
          const purchaseId = started.body.data?.id;
          if (started.status !== 201 || typeof purchaseId !== 'string') {
            failedPurchases += 1;
            continue;
          }
          const completed = await served('complete', () =>
            leanCall(purchasePath, 'PUT', token, { purchaseId }, keyHeaders()),
          );
          if (completed.status === 200) {
            purchaseMs.push(performance.now() - began);
            purchaseTimes.push(performance.now());
          } else failedPurchases += 1;
        }
      }),
    );
    const purchaseWall = performance.now() - purchasesBegan;
    const purchaseCpu = {
      server: (processCpuMicros(serverPid) - cpu.server) / Math.max(1, purchaseMs.length),
      bench: (process.cpuUsage(cpu.bench).user + process.cpuUsage(cpu.bench).system) / Math.max(1, purchaseMs.length),
    };
    const purchasesPerSecond = (purchaseMs.length / purchaseWall) * 1000;

    // 3 and 4, on a connection of our own beside the server.
    const client = new pg.Pool({ connectionString: await checkUrl(database.env), max: 2 });
    const sqlText = (text: string) => client.query(text);
    const folder = mkdtempSync(join(tmpdir(), 'pack-pgbench-'));
    let pgbenchTps = Number.NaN;
    let pgbenchClients = fanCount;
    let violations: string[] = [];
    let sales: { sold: number; live: number; pending: number; capacity: number } | undefined;
    try {
      const packId = String(pack.id).replace(/'/g, "''");
      const counted = await sqlText(`
        select p.sold,
               (select count(*) from purchases u where u.pack_id = p.id and u.status = 'pending' and u.expires_at > clock_timestamp())::int as live,
               (select count(*) from purchases u where u.pack_id = p.id and u.status = 'pending')::int as pending,
               (select sum(e.remaining) from pack_pool_entries e where e.pack_id = p.id)::bigint + (p.opened * p.cards_per_pack) as copies,
               p.cards_per_pack
        from packs p where p.id = '${packId}'`);
      const row = counted.rows[0] as {
        sold: number;
        live: number;
        pending: number;
        copies: string;
        cards_per_pack: number;
      };
      sales = {
        sold: row.sold,
        live: row.live,
        pending: row.pending,
        capacity: Math.floor(Number(row.copies) / row.cards_per_pack),
      };
      violations = await findEconomyViolations(drizzle({ client }) as unknown as Database);

      await sqlText('drop table if exists bench_packs, bench_purchases, bench_wallets, bench_ledger, bench_user_packs');
      await sqlText(
        'create table bench_packs (id integer primary key, reserved integer not null, sold integer not null)',
      );
      await sqlText('insert into bench_packs values (1, 0, 0)');
      await sqlText(
        'create table bench_purchases (id bigserial primary key, pack_id integer not null references bench_packs, user_id integer not null, status text not null, expires_at timestamptz not null)',
      );
      await sqlText('create table bench_wallets (user_id integer primary key, balance integer not null)');
      await sqlText(`insert into bench_wallets select g, 1000000000 from generate_series(0, ${fanCount}) g`);
      await sqlText(
        'create table bench_ledger (id bigserial primary key, user_id integer not null, amount integer not null, balance_after integer not null)',
      );
      await sqlText(
        'create table bench_user_packs (id bigserial primary key, user_id integer not null, purchase_id bigint not null references bench_purchases)',
      );
      const script = join(folder, 'purchase.sql');
      writeFileSync(
        script,
        [
          'BEGIN;',
          'SELECT reserved, sold FROM bench_packs WHERE id = 1 FOR NO KEY UPDATE;',
          "INSERT INTO bench_purchases (pack_id, user_id, status, expires_at) VALUES (1, :client_id, 'pending', now() + interval '15 minutes') RETURNING id AS purchase_id \\gset",
          'UPDATE bench_packs SET reserved = reserved + 1 WHERE id = 1;',
          'COMMIT;',
          'BEGIN;',
          'SELECT reserved FROM bench_packs WHERE id = 1 FOR NO KEY UPDATE;',
          "UPDATE bench_purchases SET status = 'completed' WHERE id = :purchase_id AND status = 'pending' AND expires_at > now();",
          'UPDATE bench_wallets SET balance = balance - 1 WHERE user_id = :client_id RETURNING balance \\gset',
          'INSERT INTO bench_ledger (user_id, amount, balance_after) VALUES (:client_id, -1, :balance);',
          'INSERT INTO bench_user_packs (user_id, purchase_id) VALUES (:client_id, :purchase_id);',
          'UPDATE bench_packs SET reserved = reserved - 1, sold = sold + 1 WHERE id = 1;',
          'COMMIT;',
        ].join('\n'),
      );
      const url = new URL(await checkUrl(database.env));
      const target = [
        '-h',
        url.hostname,
        '-p',
        url.port || '5432',
        '-U',
        decodeURIComponent(url.username) || 'postgres',
        url.pathname.slice(1),
      ];
      // The fans' concurrency, within what the server accepts (400 fans share the service's pool of 10).
      const maxConnections = Number((await sqlText('show max_connections')).rows[0]?.max_connections);
      pgbenchClients = Math.min(fanCount, maxConnections - 20);
      const { stdout } = await run(
        'pgbench',
        ['-n', '-c', String(pgbenchClients), '-j', '2', '-T', String(seconds), '-f', script, ...target],
        {
          env: { ...process.env, ...(url.password ? { PGPASSWORD: decodeURIComponent(url.password) } : {}) },
        },
      );
      pgbenchTps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1]);
      await sqlText('drop table bench_user_packs, bench_ledger, bench_wallets, bench_purchases, bench_packs');
    } finally {
      rmSync(folder, { recursive: true, force: true });
      await client.end();
    }

    // A pause of the whole crowd (the database stalled, the machine did) shows as a gap between answers.
    const longestPause = (times: number[]) =>
      times.reduce((longest, at, i) => (i === 0 ? 0 : Math.max(longest, at - (times[i - 1] as number))), 0);
    const settings =
      Object.entries(serverSettings)
        .map(([key, value]) => `${key}=${value}`)
        .join(', ') || 'defaults';
    console.log(
      `A drop on ${kind} PostgreSQL: ${entries} x ${copies.toLocaleString('en')} copies, ${cards} a pack, ${fanCount} fans${values.keys ? ', an Idempotency-Key on every call' : ''}; server settings: ${settings}; Node ${process.version}\n`,
    );
    const ratio = lastRate / firstRate;
    console.log('| measure | value |');
    console.log('|---|---|');
    console.log(`| publish of the pool | ${publishMs.toFixed(0)} ms |`);
    console.log(`| starts/s over the first ${windowSize.toLocaleString('en')} | ${firstRate.toFixed(0)} |`);
    console.log(
      `| starts/s over the last ${windowSize.toLocaleString('en')} of ${startTimes.length.toLocaleString('en')} | ${lastRate.toFixed(0)} (${ratio.toFixed(2)} of the first; bar 0.8) |`,
    );
    console.log(
      `| start latency p50 / p99 / max | ${median(startLatencies).toFixed(0)} / ${percentile(startLatencies, 99).toFixed(0)} / ${Math.max(...startLatencies).toFixed(0)} ms |`,
    );
    console.log(`| longest pause between two start answers | ${longestPause(startTimes).toFixed(0)} ms |`);
    console.log(
      `| whole purchases/s with ${startTimes.length.toLocaleString('en')} reservations live | ${purchasesPerSecond.toFixed(0)} (${purchaseMs.length} in ${(purchaseWall / 1000).toFixed(1)} s) |`,
    );
    console.log(`| pgbench, the same two transactions, ${pgbenchClients} clients | ${pgbenchTps.toFixed(0)}/s |`);
    console.log(
      `| whole purchases ÷ pgbench | **${(purchasesPerSecond / pgbenchTps).toFixed(2)}** (bar 0.5, aim 1.0) |`,
    );
    console.log(
      `| purchase latency (start + complete) p50 / p99 / max | ${median(purchaseMs).toFixed(0)} / **${percentile(purchaseMs, 99).toFixed(0)} ms** / ${Math.max(...purchaseMs).toFixed(0)} ms (bar: p99 under 250 ms) |`,
    );
    console.log(`| longest pause between two whole purchases | ${longestPause(purchaseTimes).toFixed(0)} ms |`);
    console.log(`| answers shed (503 overloaded) | **${shed}** (bar 0) |`);
    console.log(`| purchases that failed otherwise | ${failedPurchases} |`);
    console.log(
      `| server CPU per start / per whole purchase | ${(startCpu.server / 1000).toFixed(2)} / ${(purchaseCpu.server / 1000).toFixed(2)} ms |`,
    );
    console.log(
      `| load generator CPU per start / per whole purchase | ${(startCpu.bench / 1000).toFixed(2)} / ${(purchaseCpu.bench / 1000).toFixed(2)} ms |`,
    );
    if (sales) {
      const oversold = sales.sold + sales.live > sales.capacity;
      console.log(
        `| sold + live reservations against what the pool can fill | ${sales.sold.toLocaleString('en')} + ${sales.live.toLocaleString('en')} of ${sales.capacity.toLocaleString('en')}: ${oversold ? '**OVERSOLD**' : 'nothing oversold'} |`,
      );
    }
    console.log(`| invariant violations | ${violations.length} |`);
    console.log(`\nanswers by step and status: ${[...outcomes].map(([what, n]) => `${what} x${n}`).join(', ')}`);
    if (violations.length > 0) console.log(violations.join('\n'));
    if (violations.length > 0 || (sales && sales.sold + sales.live > sales.capacity)) process.exitCode = 1;
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
}
