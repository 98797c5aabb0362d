import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { runningEmbeddedUrl } from '../plugins/app/database/embedded-postgres.js';
import type { Database } from '../plugins/app/database/index.js';
import { findEconomyViolations } from '../plugins/app/invariants/checker.js';
import { deliverable, type StripeStandIn, signatureFor } from '../test/support/stripe.js';
import { apiCall, type ApiAnswer, benchToken, expectOk } from './lib.js';

/**
 * The mixed load of the crash test and the soak, against a running server: admin writers create
 * collectibles and packs and put the one in the other's pool; fans buy a hot pack (start,
 * complete) and open it; buyers pay for coins through Stripe Checkout (a local stand-in) and
 * deliver the signed webhooks. Every client runs as fast as the server answers, and records what
 * was acknowledged, so a check can find it in the database afterwards.
 */

const admin = benchToken({ sub: 'bench-admin', role: 'admin' });

/** Waits `ms`, or less once `keepGoing()` answers false. */
async function sleepWhile(ms: number, keepGoing: () => boolean): Promise<void> {
  const until = performance.now() + ms;
  while (keepGoing() && performance.now() < until)
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, until - performance.now())));
}

export interface Acknowledged {
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

export const nothingAcknowledged = (): Acknowledged => ({
  collectibles: new Map(),
  packs: new Map(),
  poolEntries: new Map(),
  purchases: new Map(),
  opens: new Set(),
  orders: new Set(),
});

/**
 * Requests answered, how long each took (all, and those answered as expected, by step:
 * `purchase`, `complete`, `open` ...), and those that were not what a client expects
 * (`what status` → count).
 */
export interface Tally {
  answered: number;
  latenciesMs: number[];
  servedByStep: Map<string, number[]>;
  unexpected: Map<string, number>;
  /**
   * Purchases started and completed, by the time they carry (`createdAt`, `completedAt`): one
   * transaction serves a batch of them, so purchases sharing a time were served together.
   */
  batchTimes: { starts: Map<string, number>; completes: Map<string, number> };
}

export const emptyTally = (): Tally => ({
  answered: 0,
  latenciesMs: [],
  servedByStep: new Map(),
  unexpected: new Map(),
  batchTimes: { starts: new Map(), completes: new Map() },
});

/** How many of the purchases counted in `times` shared their batch with another. */
export function servedInBatches(times: Map<string, number>): { batched: number; all: number } {
  const counts = [...times.values()];
  return {
    batched: counts.filter((n) => n > 1).reduce((sum, n) => sum + n, 0),
    all: counts.reduce((sum, n) => sum + n, 0),
  };
}

/** What the fans and buyers use: a published hot pack, funded fans, a coin bundle's price. */
export interface MixedLoadSetup {
  hotPackId: string;
  priceId: string;
  fans: string[];
  buyers: string[];
}

export async function prepareMixedLoad(
  url: string,
  options: { prefix: string; fans: number; buyers: number; cardsPerPack: number; copiesPerCard: number },
): Promise<MixedLoadSetup> {
  const call = (method: string, path: string, body?: unknown) => apiCall(`${url}${path}`, method, admin, body);
  const hot = await expectOk(
    'create pack',
    call('POST', '/api/admin/packs', { name: 'Hot pack', price: 1, cardsPerPack: options.cardsPerPack }),
    201,
  );
  for (let i = 0; i < 5; i++) {
    const collectible = await expectOk(
      'create collectible',
      call('POST', '/api/admin/collectibles', { name: `Hot card ${i}` }),
      201,
    );
    await expectOk(
      'add',
      call('POST', `/api/admin/packs/${hot.id}`, {
        action: 'addCollectible',
        collectibleId: collectible.id,
        quantity: options.copiesPerCard,
      }),
    );
  }
  await expectOk('publish', call('POST', `/api/admin/packs/${hot.id}`, { action: 'publish' }));
  const fans = Array.from({ length: options.fans }, (_, i) => `${options.prefix}-fan-${i}`);
  for (const fan of fans) {
    await expectOk('sign in', apiCall(`${url}/api/user`, 'GET', benchToken({ sub: fan })));
    await expectOk(
      'fund',
      call('POST', `/api/admin/wallets/${fan}/adjustments`, { amount: 1_000_000, reason: 'bench' }),
      201,
    );
  }
  const product = await expectOk('product', call('POST', '/api/admin/products', { name: 'Coins', coins: 100 }), 201);
  const price = await expectOk(
    'price',
    call('POST', `/api/admin/products/${product.id}/prices`, { currency: 'usd', unitAmount: 199 }),
    201,
  );
  const buyers = Array.from({ length: options.buyers }, (_, i) => `${options.prefix}-buyer-${i}`);
  return { hotPackId: hot.id, priceId: price.id, fans, buyers };
}

export interface MixedLoadOptions {
  url: string;
  setup: MixedLoadSetup;
  stripe: StripeStandIn;
  writers: number;
  /** Makes the writers' names unique across runs on one database. */
  label: string;
  acked: Acknowledged;
  tally: Tally;
  /** Checked before every step; the clients stop once it answers false. */
  keepGoing: () => boolean;
}

/**
 * Runs every client until `keepGoing()` answers false or the server stops answering (a request
 * that throws ends its client: the crash test kills the server under it).
 */
export async function runMixedLoad(options: MixedLoadOptions): Promise<void> {
  const { url, setup, stripe, acked, tally, keepGoing } = options;
  /** A call whose status is counted; anything but `expected` is recorded as unexpected. */
  const count = (key: string) => tally.unexpected.set(key, (tally.unexpected.get(key) ?? 0) + 1);
  const step = async (
    what: string,
    expected: number,
    request: () => Promise<{ status: number; retryAfterSeconds?: number }>,
  ) => {
    let answer: { status: number; retryAfterSeconds?: number };
    const started = performance.now();
    try {
      answer = await request();
    } catch (error) {
      count(`${what} ${(error as Error).name}`);
      throw error;
    }
    tally.answered += 1;
    const ms = performance.now() - started;
    tally.latenciesMs.push(ms);
    if (answer.status === expected) {
      const ofStep = tally.servedByStep.get(what) ?? [];
      ofStep.push(ms);
      tally.servedByStep.set(what, ofStep);
    } else count(`${what} ${answer.status}`);
    // A client told to come back later does, as the API's documentation asks.
    if (answer.status === 503 && answer.retryAfterSeconds) await sleepWhile(answer.retryAfterSeconds * 1000, keepGoing);
    return answer.status === expected;
  };
  const call = (
    what: string,
    expected: number,
    method: string,
    path: string,
    body: unknown,
    as: string,
    headers?: Record<string, string>,
  ) => {
    let answer: ApiAnswer | undefined;
    return step(what, expected, async () => {
      answer = await apiCall(`${url}${path}`, method, as, body, { retryOverloaded: false, headers });
      return answer;
    }).then((ok) => (ok ? (answer as ApiAnswer).json.data : undefined));
  };
  const countTime = (times: Map<string, number>, at: unknown) => {
    if (typeof at === 'string') times.set(at, (times.get(at) ?? 0) + 1);
  };
  const untilDown = async (client: () => Promise<void>) => {
    try {
      while (keepGoing()) await client();
    } catch {
      // the server is gone
    }
  };

  const fan = (sub: string, index: number) => {
    const as = benchToken({ sub });
    const packPath = `/api/packs/${setup.hotPackId}`;
    // Every other fan sends an Idempotency-Key, as careful apps do: keyed and unkeyed requests share batches.
    const keyed = () => (index % 2 === 1 ? { 'idempotency-key': randomUUID() } : undefined);
    return untilDown(async () => {
      const started = await call('purchase', 201, 'POST', `${packPath}/purchase`, undefined, as, keyed());
      if (!started || !keepGoing()) return;
      countTime(tally.batchTimes.starts, started.createdAt);
      const completed = await call(
        'complete',
        200,
        'PUT',
        `${packPath}/purchase`,
        { purchaseId: started.id },
        as,
        keyed(),
      );
      if (!completed || !keepGoing()) return;
      countTime(tally.batchTimes.completes, (completed as { purchase: { completedAt?: string } }).purchase.completedAt);
      const userPackId = (completed as { userPack: { id: string } }).userPack.id;
      acked.purchases.set(started.id as string, userPackId);
      if (await call('open', 200, 'POST', `${packPath}/open`, { userPackId }, as)) acked.opens.add(userPackId);
    });
  };

  const buyer = (sub: string) => {
    const as = benchToken({ sub });
    return untilDown(async () => {
      const order = await call('checkout', 201, 'POST', '/api/checkout/sessions', { priceId: setup.priceId }, as);
      if (!order || !keepGoing()) return;
      const orderId = order.orderId as string;
      const session = [...stripe.sessions.values()].find((candidate) => candidate.client_reference_id === orderId);
      if (!session) {
        count('checkout without its session at the Stripe stand-in');
        return;
      }
      const body = stripe.event('checkout.session.completed', stripe.pay(session.id)).body;
      const delivered = await step('webhook', 200, async () => {
        const res = await fetch(`${url}${deliverable.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signatureFor(body) },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        return { status: res.status, retryAfterSeconds: Number(res.headers.get('retry-after')) || undefined };
      });
      if (delivered) acked.orders.add(orderId);
    });
  };

  const writer = (index: number) => {
    let n = 0;
    return untilDown(async () => {
      const name = `${options.label}-${index}-${n}`;
      const quantity = 1 + (n % 9);
      n += 1;
      const collectible = await call('create collectible', 201, 'POST', '/api/admin/collectibles', { name }, admin);
      if (!collectible || !keepGoing()) return;
      acked.collectibles.set(collectible.id as string, name);
      const pack = await call('create pack', 201, 'POST', '/api/admin/packs', { name, cardsPerPack: 1 }, admin);
      if (!pack || !keepGoing()) return;
      acked.packs.set(pack.id as string, name);
      const body = { action: 'addCollectible', collectibleId: collectible.id, quantity };
      if (await call('add collectible', 200, 'POST', `/api/admin/packs/${pack.id}`, body, admin))
        acked.poolEntries.set(`${pack.id}|${collectible.id}`, quantity);
    });
  };

  await Promise.all([
    ...Array.from({ length: options.writers }, (_, index) => writer(index)),
    ...setup.fans.map((sub, index) => fan(sub, index)),
    ...setup.buyers.map(buyer),
  ]);
}

/**
 * Every write the clients saw acknowledged is in the database (with its audit row, its owned
 * pack, its stored open, its one top-up), nothing is half applied, and every invariant of
 * `npm run check-invariants` holds. Answers the problems found.
 */
export async function checkAcknowledged(databaseUrl: string, acked: Acknowledged): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const problems: string[] = [];
    const ids = async (sql: string) =>
      new Map((await client.query<{ id: string; value: string }>(sql)).rows.map((row) => [row.id, row.value]));
    const collectibles = await ids('select id, name as value from collectibles');
    const packs = await ids('select id, name as value from packs');
    const pool = await ids(
      `select pack_id || '|' || collectible_id as id, remaining::text as value from pack_pool_entries`,
    );
    const audited = new Set(
      (await client.query<{ key: string }>("select action || '|' || target_id as key from audit_log")).rows.map(
        (row) => row.key,
      ),
    );
    for (const [id, name] of acked.collectibles)
      if (collectibles.get(id) !== name) problems.push(`lost acknowledged collectible ${id}`);
    for (const [id, name] of acked.packs) if (packs.get(id) !== name) problems.push(`lost acknowledged pack ${id}`);
    for (const [key, quantity] of acked.poolEntries)
      if (pool.get(key) !== String(quantity)) problems.push(`lost acknowledged pool entry ${key}`);
    // Each change and its audit row commit together: never one without the other.
    for (const id of collectibles.keys())
      if (!audited.has(`collectible.create|${id}`)) problems.push(`collectible ${id} without its audit row`);
    for (const id of packs.keys())
      if (!audited.has(`pack.create|${id}`)) problems.push(`pack ${id} without its audit row`);
    for (const key of pool.keys())
      if (!audited.has(`pack.addCollectible|${key.split('|')[0]}`))
        problems.push(`pool entry ${key} without its audit row`);
    for (const key of audited) {
      const [action, target] = key.split('|') as [string, string];
      if (action === 'collectible.create' && !collectibles.has(target))
        problems.push(`audit row of a missing collectible ${target}`);
      if (action === 'pack.create' && !packs.has(target)) problems.push(`audit row of a missing pack ${target}`);
    }
    const orphans = await client.query(
      'select 1 from pack_pool_entries e left join packs p on p.id = e.pack_id left join collectibles c on c.id = e.collectible_id where p.id is null or c.id is null',
    );
    if (orphans.rowCount) problems.push(`${orphans.rowCount} pool entries of a missing pack or collectible`);
    const owned = new Map(
      (await client.query<{ purchase_id: string; id: string }>('select purchase_id, id from user_packs')).rows.map(
        (row) => [row.purchase_id, row.id],
      ),
    );
    for (const [purchaseId, userPackId] of acked.purchases)
      if (owned.get(purchaseId) !== userPackId) problems.push(`lost acknowledged purchase ${purchaseId}`);
    const opened = new Set(
      (await client.query<{ user_pack_id: string }>('select user_pack_id from pack_opens')).rows.map(
        (row) => row.user_pack_id,
      ),
    );
    for (const userPackId of acked.opens)
      if (!opened.has(userPackId)) problems.push(`lost acknowledged open ${userPackId}`);
    const credited = new Map(
      (
        await client.query<{ id: string; status: string; topups: number }>(
          "select o.id, o.status, (select count(*)::int from wallet_ledger l where l.kind = 'topup' and l.reference = o.id) as topups from orders o",
        )
      ).rows.map((row) => [row.id, row]),
    );
    for (const orderId of acked.orders) {
      const order = credited.get(orderId);
      if (order?.status !== 'fulfilled' || order.topups !== 1)
        problems.push(`lost acknowledged payment ${orderId}: ${JSON.stringify(order)}`);
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
export async function checkUrl(env: Record<string, string>): Promise<string> {
  const url = env.DATABASE_URL ?? (await runningEmbeddedUrl(env.DATA_DIR as string));
  if (!url) throw new Error(`no PostgreSQL runs in ${env.DATA_DIR}`);
  return url;
}
