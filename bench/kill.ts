import { parseArgs } from 'node:util';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { runningEmbeddedUrl } from '../plugins/app/database/embedded-postgres.js';
import type { Database } from '../plugins/app/db.js';
import { findEconomyViolations } from '../plugins/app/invariants/repository.js';
import { deliverable, type StripeStandIn, signatureFor, startStripeStandIn } from '../test/support/stripe.js';
import { apiCall, BENCH_SERVER_ENV, benchDatabase, expectOk, benchToken, databaseKind, median, type RunningServer, startServer } from './lib.js';

/**
 * SIGKILL under mixed write load, then restart and check, `--kills` times, on one database:
 *   npm run bench:kill -- --db embedded|external [--kills 20] [--writers 8] [--fans 4] [--buyers 2]
 * Admin writers create collectibles and packs and add collectibles to pools; fans buy packs
 * (start, complete) and open them; buyers pay for coins through Stripe Checkout (a local stand-in)
 * and deliver the signed webhooks; all as fast as the server answers. The server is killed with
 * SIGKILL at a random moment, restarted on the same data, and checked: every write the clients
 * saw acknowledged is there (with its audit row, its owned pack, its stored open, its one top-up),
 * and every invariant of `npm run check-invariants` holds, so nothing unacknowledged is half
 * applied. Last, one SIGTERM under the same load must exit 0.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    kills: { type: 'string', default: '20' },
    writers: { type: 'string', default: '8' },
    fans: { type: 'string', default: '4' },
    buyers: { type: 'string', default: '2' },
  },
});
const kind = databaseKind(values.db);
const kills = Number(values.kills);
const writers = Number(values.writers);
const fanCount = Number(values.fans);
const buyerCount = Number(values.buyers);
const token = benchToken({ sub: 'bench-admin', role: 'admin' });
const PORT = 3531;

interface Acknowledged {
  collectibles: Map<string, string>;
  packs: Map<string, string>;
  /** `${packId}|${collectibleId}` → quantity */
  poolEntries: Map<string, number>;
  /** Purchases completed (200) → the owned pack's id. */
  purchases: Map<string, string>;
  /** Owned packs whose open answered 200. */
  opens: Set<string>;
  /** Orders whose checkout.session.completed webhook answered 200. */
  orders: Set<string>;
}

/** A call to the server under test, as the admin unless `as` says otherwise. */
const call = (url: string, method: string, path: string, body: unknown, as = token) => apiCall(`${url}${path}`, method, as, body);

/** One fan: buy a pack of the hot pack (start, complete) and open it, over and over. */
async function buyAndOpenUntilDown(url: string, fan: string, packId: string, acked: Acknowledged): Promise<number> {
  const as = benchToken({ sub: fan });
  let done = 0;
  for (;;) {
    try {
      const started = await call(url, 'POST', `/api/packs/${packId}/purchase`, undefined, as);
      done += 1;
      if (started.status !== 201) continue;
      const completed = await call(url, 'PUT', `/api/packs/${packId}/purchase`, { purchaseId: started.json.data?.id }, as);
      done += 1;
      if (completed.status !== 200) continue;
      const userPackId = (completed.json.data as { userPack: { id: string } }).userPack.id;
      acked.purchases.set(started.json.data?.id as string, userPackId);
      const opened = await call(url, 'POST', `/api/packs/${packId}/open`, { userPackId }, as);
      done += 1;
      if (opened.status === 200) acked.opens.add(userPackId);
    } catch {
      return done; // the server is gone
    }
  }
}

/** One buyer: a Checkout Session, paid at the stand-in, its signed webhook delivered, over and over. */
async function buyCoinsUntilDown(url: string, buyer: string, priceId: string, stripe: StripeStandIn, acked: Acknowledged): Promise<number> {
  const as = benchToken({ sub: buyer });
  let done = 0;
  for (;;) {
    try {
      const order = await call(url, 'POST', '/api/checkout/sessions', { priceId }, as);
      done += 1;
      if (order.status !== 201) continue;
      const orderId = order.json.data?.orderId as string;
      const session = [...stripe.sessions.values()].find((candidate) => candidate.client_reference_id === orderId);
      if (!session) continue;
      const body = stripe.event('checkout.session.completed', stripe.pay(session.id)).body;
      const res = await fetch(`${url}${deliverable.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': signatureFor(body) },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      done += 1;
      if (res.status === 200) acked.orders.add(orderId);
    } catch {
      return done;
    }
  }
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
    const owned = new Map((await client.query<{ purchase_id: string; id: string }>('select purchase_id, id from user_packs')).rows.map((row) => [row.purchase_id, row.id]));
    for (const [purchaseId, userPackId] of acked.purchases) if (owned.get(purchaseId) !== userPackId) problems.push(`lost acknowledged purchase ${purchaseId}`);
    const opened = new Set((await client.query<{ user_pack_id: string }>('select user_pack_id from pack_opens')).rows.map((row) => row.user_pack_id));
    for (const userPackId of acked.opens) if (!opened.has(userPackId)) problems.push(`lost acknowledged open ${userPackId}`);
    const credited = new Map(
      (await client.query<{ id: string; status: string; topups: number }>(
        "select o.id, o.status, (select count(*)::int from wallet_ledger l where l.kind = 'topup' and l.reference = o.id) as topups from orders o",
      )).rows.map((row) => [row.id, row]),
    );
    for (const orderId of acked.orders) {
      const order = credited.get(orderId);
      if (order?.status !== 'fulfilled' || order.topups !== 1) problems.push(`lost acknowledged payment ${orderId}: ${JSON.stringify(order)}`);
    }
    // Everything else, acknowledged or not, must be whole: the invariants of check-invariants.
    const orm = drizzle({ client }) as unknown as Database;
    for (const violation of await findEconomyViolations(orm)) problems.push(`invariant: ${violation}`);
    return problems;
  } finally {
    await client.end();
  }
}

/** The connection string a check can use: the external database, or the running embedded server's. */
async function checkUrl(env: Record<string, string>): Promise<string> {
  const url = env.DATABASE_URL ?? (await runningEmbeddedUrl(env.DATA_DIR as string));
  if (!url) throw new Error(`no PostgreSQL runs in ${env.DATA_DIR}`);
  return url;
}

const stripe = await startStripeStandIn();
const database = await benchDatabase(kind);
try {
  const env = { ...database.env, ...BENCH_SERVER_ENV, ...stripe.env, LOG_LEVEL: 'error', PURCHASE_RATE_LIMIT: '1000000', CRON_INTERNAL: 'false' };
  const acked: Acknowledged = { collectibles: new Map(), packs: new Map(), poolEntries: new Map(), purchases: new Map(), opens: new Set(), orders: new Set() };
  const restarts: number[] = [];
  let writes = 0;
  let server: RunningServer = await startServer(env, PORT);
  // What the fans and buyers use: a hot pack with copies for every run, funded fans, a coin bundle.
  const hot = await expectOk('create pack', call(server.url, 'POST', '/api/admin/packs', { name: 'Hot pack', price: 1, cardsPerPack: 3 }), 201);
  for (let i = 0; i < 5; i++) {
    const collectible = await expectOk('create collectible', call(server.url, 'POST', '/api/admin/collectibles', { name: `Hot card ${i}` }), 201);
    await expectOk('add', call(server.url, 'POST', `/api/admin/packs/${hot.id}`, { action: 'addCollectible', collectibleId: collectible.id, quantity: 20_000 }));
  }
  await expectOk('publish', call(server.url, 'POST', `/api/admin/packs/${hot.id}`, { action: 'publish' }));
  const fans = Array.from({ length: fanCount }, (_, i) => `kill-fan-${i}`);
  for (const fan of fans) {
    await expectOk('sign in', call(server.url, 'GET', '/api/user', undefined, benchToken({ sub: fan })));
    await expectOk('fund', call(server.url, 'POST', `/api/admin/wallets/${fan}/adjustments`, { amount: 1_000_000, reason: 'bench' }), 201);
  }
  const product = await expectOk('product', call(server.url, 'POST', '/api/admin/products', { name: 'Coins', coins: 100 }), 201);
  const price = await expectOk('price', call(server.url, 'POST', `/api/admin/products/${product.id}/prices`, { currency: 'usd', unitAmount: 199 }), 201);
  const buyers = Array.from({ length: buyerCount }, (_, i) => `kill-buyer-${i}`);
  const mixedLoad = (round: number) => [
    ...Array.from({ length: writers }, (_, writer) => writeUntilDown(server.url, round, writer, acked)),
    ...fans.map((fan) => buyAndOpenUntilDown(server.url, fan, hot.id, acked)),
    ...buyers.map((buyer) => buyCoinsUntilDown(server.url, buyer, price.id, stripe, acked)),
  ];
  const allProblems: string[] = [];
  for (let round = 1; round <= kills; round++) {
    const load = mixedLoad(round);
    await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 1200));
    server.child.kill('SIGKILL');
    writes += (await Promise.all(load)).reduce((sum, n) => sum + n, 0);
    const started = performance.now();
    server = await startServer(env, PORT);
    restarts.push(performance.now() - started);
    const problems = await check(await checkUrl(env), acked);
    allProblems.push(...problems.map((problem) => `after kill ${round}: ${problem}`));
    process.stderr.write(
      `kill ${round}/${kills}: acknowledged so far ${acked.collectibles.size} collectibles, ${acked.purchases.size} purchases, ${acked.opens.size} opens, ${acked.orders.size} payments; ${problems.length} problems\n`,
    );
  }
  // SIGTERM under the same load: graceful, exit 0.
  const load = mixedLoad(kills + 1);
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

  console.log(`SIGKILL under mixed write load on ${kind}: ${writers} admin writers, ${fanCount} fans buying and opening, ${buyerCount} buyers paying through Checkout; Node ${process.version}\n`);
  console.log('| kills | requests answered | acknowledged: admin creations / purchases / opens / payments | lost acknowledged writes | invariant violations | restart to ready (median / max) | SIGTERM under load |');
  console.log('|---|---|---|---|---|---|---|');
  const lost = allProblems.filter((problem) => problem.includes('lost')).length;
  const admin = acked.collectibles.size + acked.packs.size + acked.poolEntries.size;
  console.log(
    `| ${kills} | ${writes} | ${admin} / ${acked.purchases.size} / ${acked.opens.size} / ${acked.orders.size} | ${lost} | ${allProblems.length - lost} | ${Math.round(median(restarts))} / ${Math.round(Math.max(...restarts))} ms | exit ${code} after ${Math.round(termMs)} ms |`,
  );
  for (const problem of allProblems.slice(0, 20)) console.log(`- ${problem}`);
  if (allProblems.length > 0 || code !== 0) process.exitCode = 1;
} finally {
  await database.cleanup();
  await stripe.close();
}
