import pg from 'pg';
import t, { type Test } from 'tap';
import type { App } from '../../app.js';
import { findEconomyViolations } from '../../plugins/app/invariants/repository.js';
import { drizzle } from 'drizzle-orm/node-postgres';
import type { Database } from '../../plugins/app/db.js';
import { bearer, buildTestApp, createTestDatabase } from '../support/app.js';
import { packInStatus } from '../support/catalog.js';
import { completePurchase, fund, signIn, startPurchase, type Fan } from '../support/economy.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/**
 * The database goes away under load, through a TCP proxy between the app and PostgreSQL: a network
 * cut (silence) and a server that refuses. Every request is answered within 2 s (200, or 503
 * `database_unavailable`, never a 500 or a hang), readiness says 503 within the watch's bound, the
 * app recovers without a restart within 5 s of the database's return, no pool connection is
 * lost, and no purchase is half applied. `OUTAGE_CUT_MS` sets the cut's length (10 s).
 */

const CUT_MS = Number(process.env.OUTAGE_CUT_MS ?? 10_000);
const ANSWER_BOUND_MS = 2000;
const RECOVERY_BOUND_MS = 5000;
/** The production watch: a ping every 500 ms, down after 1 s of silence; purchases not rate limited, so the fans keep buying. */
const WATCH_ENV = { DATABASE_WATCH_INTERVAL: '500 ms', DATABASE_WATCH_TIMEOUT: '1 second', PURCHASE_RATE_LIMIT: '1000000' };

interface Answer {
  what: string;
  startedAt: number;
  ms: number;
  status: number;
  code?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fans buying packs and reading their wallet, and anyone reading the catalog, until `until()` says stop. */
function load(app: App, fans: Fan[], packId: string, until: () => boolean, acknowledged: Set<string>): Promise<Answer[]> {
  const answers: Answer[] = [];
  const timed = async (what: string, request: () => Promise<{ statusCode: number; json(): { error?: { code: string }; data?: { id?: string } } }>) => {
    const startedAt = performance.now();
    const res = await request();
    answers.push({ what, startedAt, ms: performance.now() - startedAt, status: res.statusCode, code: res.statusCode >= 400 ? res.json().error?.code : undefined });
    return res;
  };
  const fanLoop = async (fan: Fan) => {
    while (!until()) {
      await timed('wallet', () => app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) }));
      const started = await timed('purchase', () => startPurchase(app, fan, packId));
      if (started.statusCode === 201) {
        const purchaseId = started.json().data?.id as string;
        const completed = await timed('complete', () => completePurchase(app, fan, packId, { purchaseId }));
        if (completed.statusCode === 200) acknowledged.add(purchaseId);
      }
      await timed('catalog', () => app.inject({ method: 'GET', url: '/api/packs' }));
      await sleep(20);
    }
  };
  return Promise.all(fans.map(fanLoop)).then(() => answers);
}

async function outage(t: Test, how: 'partition' | 'refuse') {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const direct = new URL(database.url);
  const proxy: TcpProxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  t.teardown(() => proxy.close());
  const app = await buildTestApp(t, { DATABASE_URL: proxy.urlFor(database.url), ...WATCH_ENV, LOG_LEVEL: process.env.OUTAGE_LOG_LEVEL ?? 'silent' });

  const { pack } = await packInStatus(app, 'active', { pack: { price: 1, cardsPerPack: 1 }, pool: [{ quantity: 100_000 }] });
  const fans = await Promise.all(Array.from({ length: 8 }, (_, i) => signIn(app, `fan-outage-${how}-${i}`)));
  for (const fan of fans) await fund(app, fan, 100_000);

  const acknowledged = new Set<string>();
  let stop = false;
  const running = load(app, fans, pack.id, () => stop, acknowledged);
  await sleep(1000);

  const cutAt = performance.now();
  if (how === 'partition') proxy.partition();
  else proxy.refuse();
  let notReadyAt: number | undefined;
  while (performance.now() - cutAt < CUT_MS) {
    if (notReadyAt === undefined && (await app.inject({ method: 'GET', url: '/api/health/ready' })).statusCode === 503) notReadyAt = performance.now();
    await sleep(100);
  }
  const restoredAt = performance.now();
  proxy.restore();
  let readyAt: number | undefined;
  let firstWriteAt: number | undefined;
  /** What recovery looked like, for the failure message: elapsed ms, readiness, purchase. */
  const trace: string[] = [];
  while (performance.now() - restoredAt < 3 * RECOVERY_BOUND_MS && (readyAt === undefined || firstWriteAt === undefined)) {
    const ready = await app.inject({ method: 'GET', url: '/api/health/ready' });
    if (readyAt === undefined && ready.statusCode === 200) readyAt = performance.now();
    const purchase = await startPurchase(app, fans[0] as Fan, pack.id);
    if (firstWriteAt === undefined && purchase.statusCode === 201) firstWriteAt = performance.now();
    trace.push(`${Math.round(performance.now() - restoredAt)}:${ready.statusCode}/${purchase.statusCode}${purchase.statusCode >= 400 ? `(${purchase.json().error?.message?.slice(0, 80)})` : ''}`);
    await sleep(50);
  }
  await sleep(1000);
  stop = true;
  const answers = await running;

  const during = answers.filter((answer) => answer.startedAt >= cutAt && answer.startedAt < restoredAt);
  const slowest = Math.max(...during.map((answer) => answer.ms));
  t.ok(during.length > 20, `${during.length} requests made during the ${CUT_MS / 1000} s cut`);
  t.ok(slowest <= ANSWER_BOUND_MS, `every one answered within ${ANSWER_BOUND_MS} ms (slowest ${Math.round(slowest)} ms)`);
  t.same(
    answers.filter((answer) => answer.status >= 500 && !(answer.status === 503 && answer.code === 'database_unavailable')),
    [],
    'no 500, and every 503 is database_unavailable',
  );
  t.ok(
    during.some((answer) => answer.code === 'database_unavailable'),
    'the database was missed during the cut',
  );
  t.ok(notReadyAt !== undefined && notReadyAt - cutAt <= ANSWER_BOUND_MS, `readiness said 503 ${Math.round((notReadyAt ?? Number.NaN) - cutAt)} ms after the cut`);
  t.ok(readyAt !== undefined && readyAt - restoredAt <= RECOVERY_BOUND_MS, `ready again ${Math.round((readyAt ?? Number.NaN) - restoredAt)} ms after the database returned`, { trace });
  t.ok(firstWriteAt !== undefined && firstWriteAt - restoredAt <= RECOVERY_BOUND_MS, `a purchase succeeded ${Math.round((firstWriteAt ?? Number.NaN) - restoredAt)} ms after the database returned`);
  const after = answers.filter((answer) => answer.startedAt >= (firstWriteAt ?? Number.POSITIVE_INFINITY));
  t.same(
    after.filter((answer) => answer.status >= 500),
    [],
    'once recovered, every request succeeds again',
  );

  // Nothing leaked: twice the pool's size in requests at once all succeed, over at most its 10 connections.
  const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => app.inject({ method: 'GET', url: '/api/wallet', headers: bearer((fans[i % fans.length] as Fan).token) })));
  t.same(burst.map((res) => res.statusCode), Array(20).fill(200), 'a burst after recovery is served');

  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  try {
    const { rows } = await pool.query<{ connections: number }>(
      "select count(*)::int as connections from pg_stat_activity where datname = current_database() and application_name = 'pack-service'",
    );
    t.ok((rows[0]?.connections ?? 0) <= 10, `the pool holds ${rows[0]?.connections} connections (at most 10)`);
    const owned = await pool.query<{ purchase_id: string }>('select purchase_id from user_packs');
    const stored = new Set(owned.rows.map((row) => row.purchase_id));
    t.same([...acknowledged].filter((id) => !stored.has(id)), [], `all ${acknowledged.size} purchases acknowledged are stored`);
    t.same(await findEconomyViolations(drizzle({ client: pool }) as unknown as Database), [], 'the invariants hold: nothing half applied');
  } finally {
    await pool.end();
  }
  // A connection lent and never given back (a transaction whose BEGIN failed) would keep the pool from closing.
  const closing = performance.now();
  const closed = await Promise.race([app.close().then(() => true), sleep(5000).then(() => false)]);
  t.ok(closed, `the app closed in ${Math.round(performance.now() - closing)} ms: every connection lent was given back`);
}

t.test('a network cut between the app and PostgreSQL', (t) => outage(t, 'partition'));
t.test('PostgreSQL refusing connections', (t) => outage(t, 'refuse'));
