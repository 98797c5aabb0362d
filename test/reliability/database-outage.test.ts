import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { startEmbeddedPostgres } from '../../plugins/app/database/embedded-postgres.js';
import type { App } from '../../app.js';
import { findEconomyViolations } from '../../plugins/app/invariants/checker.js';
import { drizzle } from 'drizzle-orm/node-postgres';
import type { Database } from '../../plugins/app/database/index.js';
import { bearer, buildTestApp, createTestDatabase } from '../support/app.js';
import { packInStatus } from '../support/catalog.js';
import { completePurchase, fund, signIn, startPurchase, type Fan } from '../support/economy.js';
import { startTcpProxyTo, type TcpProxy } from '../support/tcp-proxy.js';

/**
 * The database goes away under load, through a TCP proxy between the app and PostgreSQL: a network
 * cut (silence), a server that refuses, and a server restarted (stopped, then started again). Every request is answered within 2 s (200, or 503
 * `database_unavailable`, never a 500 or a hang), readiness says 503 within the watch's bound, the
 * app recovers without a restart within 5 s of the database's return, no pool connection is
 * lost, and no purchase is half applied. `OUTAGE_CUT_MS` sets the cut's length (10 s).
 */

const CUT_MS = Number(process.env.OUTAGE_CUT_MS ?? 10_000);
const ANSWER_BOUND_MS = 2000;
const RECOVERY_BOUND_MS = 5000;
/** The production watch: a ping every 500 ms, down after 1 s of silence; purchases not rate limited, so the fans keep buying. */
const WATCH_ENV = {
  DATABASE_WATCH_INTERVAL: '500 ms',
  DATABASE_WATCH_TIMEOUT: '1 second',
  PURCHASE_RATE_LIMIT: '1000000',
};

interface Answer {
  what: string;
  startedAt: number;
  ms: number;
  status: number;
  code?: string;
  message?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fans buying packs and reading their wallet, and anyone reading the catalog, until `until()` says stop. */
function load(
  app: App,
  fans: Fan[],
  packId: string,
  until: () => boolean,
  acknowledged: Set<string>,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  const timed = async (
    what: string,
    request: () => Promise<{
      statusCode: number;
      json(): { error?: { code: string; message: string }; data?: { id?: string } };
    }>,
  ) => {
    const startedAt = performance.now();
    const res = await request();
    const error = res.statusCode >= 400 ? res.json().error : undefined;
    answers.push({
      what,
      startedAt,
      ms: performance.now() - startedAt,
      status: res.statusCode,
      code: error?.code,
      message: error?.message,
    });
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

/**
 * A way for the database to go away and come back. `url` is where the app's database is (the
 * app reaches it through the proxy); `cut()` takes it away, after which the test waits `holdMs`;
 * `heal()` brings it back (and points the proxy at it).
 */
interface Fault {
  name: string;
  url: string;
  holdMs: number;
  /** Whether requests must have been refused while it lasted (a restart may be too quick for some). */
  refusesWork: boolean;
  cut(proxy: TcpProxy): Promise<void>;
  heal(proxy: TcpProxy): Promise<void>;
}

/** A fresh database on the suite's server, and a fault of the proxy. */
async function proxyFault(t: Test, how: 'partition' | 'refuse'): Promise<Fault> {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  return {
    name: how,
    url: database.url,
    holdMs: CUT_MS,
    refusesWork: true,
    cut: async (proxy) => (how === 'partition' ? proxy.partition() : proxy.refuse()),
    heal: async (proxy) => proxy.restore(),
  };
}

/**
 * A PostgreSQL server of the test's own (the embedded server's binaries, in a folder of its own),
 * stopped (a fast shutdown: open transactions roll back, connections are ended) and started
 * again on the same data, on whatever port is free then.
 */
async function restartFault(t: Test): Promise<Fault> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pack-service-restart-'));
  const quiet = pino({ level: 'silent' });
  let server = await startEmbeddedPostgres({ dataDir, log: quiet });
  t.teardown(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    name: 'restart',
    url: server.url,
    holdMs: 0,
    refusesWork: false,
    cut: () => server.stop(),
    heal: async (proxy) => {
      server = await startEmbeddedPostgres({ dataDir, log: quiet });
      proxy.retarget(server.port);
    },
  };
}

async function outage(t: Test, fault: Fault) {
  const how = fault.name;
  const proxy: TcpProxy = await startTcpProxyTo(fault.url);
  t.teardown(() => proxy.close());
  const app = await buildTestApp(t, {
    DATABASE_URL: proxy.urlFor(fault.url),
    ...WATCH_ENV,
    LOG_LEVEL: process.env.OUTAGE_LOG_LEVEL ?? 'silent',
  });

  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 1, cardsPerPack: 1 },
    pool: [{ quantity: 100_000 }],
  });
  const fans = await Promise.all(Array.from({ length: 8 }, (_, i) => signIn(app, `fan-outage-${how}-${i}`)));
  for (const fan of fans) await fund(app, fan, 100_000);

  const acknowledged = new Set<string>();
  let stop = false;
  const running = load(app, fans, pack.id, () => stop, acknowledged);
  await sleep(1000);

  const cutAt = performance.now();
  await fault.cut(proxy);
  let notReadyAt: number | undefined;
  while (performance.now() - cutAt < fault.holdMs) {
    if (notReadyAt === undefined && (await app.inject({ method: 'GET', url: '/api/health/ready' })).statusCode === 503)
      notReadyAt = performance.now();
    await sleep(100);
  }
  await fault.heal(proxy);
  const restoredAt = performance.now();
  let readyAt: number | undefined;
  let firstWriteAt: number | undefined;
  /** What recovery looked like, for the failure message: elapsed ms, readiness, purchase. */
  const trace: string[] = [];
  while (
    performance.now() - restoredAt < 3 * RECOVERY_BOUND_MS &&
    (readyAt === undefined || firstWriteAt === undefined)
  ) {
    const ready = await app.inject({ method: 'GET', url: '/api/health/ready' });
    if (readyAt === undefined && ready.statusCode === 200) readyAt = performance.now();
    const purchase = await startPurchase(app, fans[0] as Fan, pack.id);
    if (firstWriteAt === undefined && purchase.statusCode === 201) firstWriteAt = performance.now();
    trace.push(
      `${Math.round(performance.now() - restoredAt)}:${ready.statusCode}/${purchase.statusCode}${purchase.statusCode >= 400 ? `(${purchase.json().error?.message?.slice(0, 80)})` : ''}`,
    );
    await sleep(50);
  }
  await sleep(1000);
  stop = true;
  const answers = await running;

  const during = answers.filter((answer) => answer.startedAt >= cutAt && answer.startedAt < restoredAt);
  const slowest = Math.max(...during.map((answer) => answer.ms));
  t.ok(
    during.length > (fault.refusesWork ? 20 : 0),
    `${during.length} requests made during the ${Math.round(restoredAt - cutAt)} ms the database was away`,
  );
  t.ok(
    slowest <= ANSWER_BOUND_MS,
    `every one answered within ${ANSWER_BOUND_MS} ms (slowest ${Math.round(slowest)} ms)`,
  );
  t.same(
    answers.filter(
      (answer) => answer.status >= 500 && !(answer.status === 503 && answer.code === 'database_unavailable'),
    ),
    [],
    'no 500, and every 503 is database_unavailable',
  );
  if (fault.refusesWork) {
    t.ok(
      during.some((answer) => answer.code === 'database_unavailable'),
      'the database was missed during the cut',
    );
    t.ok(
      notReadyAt !== undefined && notReadyAt - cutAt <= ANSWER_BOUND_MS,
      `readiness said 503 ${Math.round((notReadyAt ?? Number.NaN) - cutAt)} ms after the cut`,
    );
  } else {
    t.comment(
      `${during.filter((answer) => answer.code === 'database_unavailable').length} of ${during.length} requests made while it was away answered 503 database_unavailable`,
    );
  }
  t.ok(
    readyAt !== undefined && readyAt - restoredAt <= RECOVERY_BOUND_MS,
    `ready again ${Math.round((readyAt ?? Number.NaN) - restoredAt)} ms after the database returned`,
    { trace },
  );
  t.ok(
    firstWriteAt !== undefined && firstWriteAt - restoredAt <= RECOVERY_BOUND_MS,
    `a purchase succeeded ${Math.round((firstWriteAt ?? Number.NaN) - restoredAt)} ms after the database returned`,
  );
  const after = answers.filter((answer) => answer.startedAt >= (firstWriteAt ?? Number.POSITIVE_INFINITY));
  t.same(
    after.filter((answer) => answer.status >= 500),
    [],
    'once recovered, every request succeeds again',
  );

  // Nothing leaked: twice the pool's size in requests at once all succeed, over at most its 10 connections.
  const burst = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      app.inject({ method: 'GET', url: '/api/wallet', headers: bearer((fans[i % fans.length] as Fan).token) }),
    ),
  );
  t.same(
    burst.map((res) => res.statusCode),
    Array(20).fill(200),
    'a burst after recovery is served',
  );

  const pool = new pg.Pool({ connectionString: proxy.urlFor(fault.url), max: 1 });
  try {
    const { rows } = await pool.query<{ connections: number }>(
      "select count(*)::int as connections from pg_stat_activity where datname = current_database() and application_name = 'pack-service'",
    );
    t.ok((rows[0]?.connections ?? 0) <= 10, `the pool holds ${rows[0]?.connections} connections (at most 10)`);
    const owned = await pool.query<{ purchase_id: string }>('select purchase_id from user_packs');
    const stored = new Set(owned.rows.map((row) => row.purchase_id));
    t.same(
      [...acknowledged].filter((id) => !stored.has(id)),
      [],
      `all ${acknowledged.size} purchases acknowledged are stored`,
    );
    t.same(
      await findEconomyViolations(drizzle({ client: pool }) as unknown as Database),
      [],
      'the invariants hold: nothing half applied',
    );
  } finally {
    await pool.end();
  }
  // A connection lent and never given back (a transaction whose BEGIN failed) would keep the pool from closing.
  const closing = performance.now();
  const closed = await Promise.race([app.close().then(() => true), sleep(5000).then(() => false)]);
  t.ok(closed, `the app closed in ${Math.round(performance.now() - closing)} ms: every connection lent was given back`);
}

t.test('a network cut between the app and PostgreSQL', async (t) => outage(t, await proxyFault(t, 'partition')));
t.test('PostgreSQL refusing connections', async (t) => outage(t, await proxyFault(t, 'refuse')));
t.test('PostgreSQL restarted under load', async (t) => outage(t, await restartFault(t)));
