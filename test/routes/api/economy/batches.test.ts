import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type SQL, sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import type { App } from '../../../../app.js';
import { KeyedBatcher } from '../../../../plugins/app/database/batcher.js';
import { bearer, buildTestApp, suiteServer } from '../../../support/app.js';
import { ADMIN, applyAction, getAdminPack, packInStatus } from '../../../support/catalog.js';
import {
  balance,
  buyPack,
  cancelPurchase,
  completePurchase,
  assertNoViolations,
  errorCode,
  type Fan,
  fund,
  openPack,
  purchaseStatuses,
  salesOf,
  signIn,
  sqlRows,
  startPurchase,
} from '../../../support/economy.js';
import { holdLock, someoneWaitsForALock } from '../../../support/locks.js';

/**
 * Group commit of a drop (both databases): the starts, completes and opens of one pack that
 * arrive while a batch of that pack runs are served together by the next transaction. Each case
 * builds one batch on purpose (a row lock held from outside stops a first request, a batch of
 * one; the others queue behind it in a known order; then the lock is released) and checks every
 * answer, the stored effect, the kept count of reservations (packs.reserved) against the pending
 * purchases, and the economy's invariants. Also: reclaiming expired reservations lazily in bounded
 * rounds, the expiry job, an admin change counting live reservations exactly, and admission (503
 * when a pack's queue would wait past DATABASE_QUEUE_LIMIT).
 */

type Res = LightMyRequestResponse;

/** The admin view of a pack (not cached, unlike the public one), with its sales. */
/** `201`, or `409 sold_out` for an error with its code. */
const outcome = (res: Res): string =>
  res.statusCode < 400 ? String(res.statusCode) : `${res.statusCode} ${errorCode(res)}`;

function tally(responses: Res[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const res of responses) counts[outcome(res)] = (counts[outcome(res)] ?? 0) + 1;
  return counts;
}

const ids = (values: readonly string[]) => sql`${sql.param(values)}::text[]`;

/** The pack's kept count of reservations and its pending purchases (stored status), which it must equal. */
async function keptCount(app: App, packId: string): Promise<{ kept: number; pending: number }> {
  const [row] = await sqlRows<{ kept: number; pending: number }>(
    app,
    sql`select k.reserved as kept, (select count(*) from purchases p where p.pack_id = k.id and p.status = 'pending')::int as pending
        from packs k where k.id = ${packId}`,
  );
  if (!row) throw new Error(`no pack ${packId}`);
  return row;
}

async function assertKept(t: Test, app: App, packId: string, pending: number, what: string): Promise<void> {
  t.same(
    await keptCount(app, packId),
    { kept: pending, pending },
    `${what}: kept count = pending purchases = ${pending}`,
  );
}

/** Fails with the body when a request did not answer 200. */
function expectOk(t: Test, res: Res, what: string): void {
  t.equal(res.statusCode, 200, `${what} (${res.statusCode === 200 ? 'ok' : res.body})`);
}

/** `available` of the public pack view (GET /api/packs/{id}), cached up to 5 s: read once per pack, when it matters. */
async function publicAvailable(app: App, packId: string): Promise<number> {
  const res = await app.inject({ method: 'GET', url: `/api/packs/${packId}` });
  if (res.statusCode !== 200) throw new Error(`pack detail: ${res.statusCode} ${res.body}`);
  return res.json().data.pack.available;
}

/** The fan's purchase debits in the ledger (one entry per paid purchase), by purchase id. */
async function purchaseDebits(app: App, fan: Fan): Promise<{ reference: string; amount: number }[]> {
  return sqlRows(
    app,
    sql`select reference, amount from wallet_ledger where user_id = ${fan.id} and kind = 'purchase' order by reference`,
  );
}

/** `count` signed-in fans, each credited with `coins` (when above 0). */
async function fans(app: App, prefix: string, count: number, coins = 0): Promise<Fan[]> {
  const made: Fan[] = [];
  for (let i = 0; i < count; i++) {
    const fan = await signIn(app, `${prefix}-${i}`);
    if (coins > 0) await fund(app, fan, coins);
    made.push(fan);
  }
  return made;
}

/** Starts a purchase that must succeed; its id. */
async function started(app: App, fan: Fan, packId: string): Promise<string> {
  const res = await startPurchase(app, fan, packId);
  if (res.statusCode !== 201) throw new Error(`start purchase: ${res.statusCode} ${res.body}`);
  return res.json().data.id;
}

/** A purchase started by each fan, one after another; their ids in that order. */
async function startedInTurn(app: App, buyers: readonly Fan[], packId: string): Promise<string[]> {
  const purchaseIds: string[] = [];
  for (const fan of buyers) purchaseIds.push(await started(app, fan, packId));
  return purchaseIds;
}

/**
 * Moves the purchases' expiry into the past by the database's clock, as if their TTL had run out
 * with nothing reclaiming them since: which reservations are live and which lapsed is then set by
 * the test, not by how fast the machine runs it.
 */
async function lapse(app: App, purchaseIds: readonly string[]): Promise<void> {
  await app.db.orm.execute(
    sql`update purchases set expires_at = clock_timestamp() - interval '1 second' where id = any(${ids(purchaseIds)})`,
  );
}

async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await done()); await sleep(2)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
  }
}

/**
 * Requests that reached a batcher's queue, counted by key (a pack's id) by wrapping
 * KeyedBatcher.prototype.submit (every batchedChange of the app is one). A request reads its caller from the database before it reaches
 * the queue, so requests sent together arrive in no fixed order: sending each once the previous
 * one is queued makes the arrival order, which decides a batch, the order the test gives.
 *
 * The wrapper also records each batch a batcher runs (its key, its size, whether it threw): the
 * only way to see that a failed batch was run again request by request, which answers the same.
 */
const submitted = new Map<string, number>();
const submittedFor = (key: string) => submitted.get(key) ?? 0;
interface BatchRun {
  key: string;
  size: number;
  failed: boolean;
}
const batchRuns: BatchRun[] = [];
const watched = new WeakSet<object>();
type Run = (key: string, items: unknown[]) => Promise<unknown[]>;
const realSubmit = KeyedBatcher.prototype.submit;
KeyedBatcher.prototype.submit = function submit(this: KeyedBatcher<unknown, unknown>, key: string, item: unknown) {
  submitted.set(key, submittedFor(key) + 1);
  if (!watched.has(this)) {
    watched.add(this);
    // `run` is the constructor's parameter property: an own field, called as this.run for each batch.
    const batcher = this as unknown as { run: Run };
    const run = batcher.run;
    batcher.run = async (batchKey, items) => {
      const record = { key: batchKey, size: items.length, failed: false };
      batchRuns.push(record);
      try {
        return await run(batchKey, items);
      } catch (error) {
        record.failed = true;
        throw error;
      }
    };
  }
  return realSubmit.call(this, key, item);
};
t.teardown(() => {
  KeyedBatcher.prototype.submit = realSubmit;
});

/** The batches run for `key` since `mark` (an index of batchRuns): size, and `!` for one that threw. */
const runsSince = (mark: number, key: string) =>
  batchRuns.slice(mark).flatMap((run) => (run.key === key ? [`${run.size}${run.failed ? '!' : ''}`] : []));

/** A request sent now (inject answers a lazy thenable: Promise.resolve sends it), and whether it was answered. */
interface Sent {
  response: Promise<Res>;
  answered: () => boolean;
}

function send(request: PromiseLike<Res>): Sent {
  let done = false;
  const response = Promise.resolve(request).finally(() => {
    done = true;
  });
  return { response, answered: () => done };
}

/** Sends a request for the pack `key` and waits until it has joined that pack's batch queue (or was answered without). */
async function sendQueued(key: string, request: () => PromiseLike<Res>): Promise<Sent> {
  const before = submittedFor(key);
  const sent = send(request());
  await until('the request joins the batch queue', () => submittedFor(key) > before || sent.answered());
  return sent;
}

const packRow = (packId: string) => sql`select 1 from packs where id = ${packId} for update`;
const purchaseRows = (purchaseIds: readonly string[]) =>
  sql`select 1 from purchases where id = any(${ids(purchaseIds)}) for update`;

/**
 * One batch on purpose: while `lock` is held from outside, `first` is sent and waits for it (a
 * batch of one, holding its key's turn); each of `rest` is then sent once the previous one is
 * queued behind it, so they form the next batch, in that order; then the lock is released.
 * `answeredEarly` counts the requests answered before the release (none, when all of them waited
 * in the batcher behind the first); `runs`, the batches run for the pack meanwhile.
 */
async function batchBehind(
  app: App,
  packId: string,
  lock: SQL,
  first: () => PromiseLike<Res>,
  rest: (() => PromiseLike<Res>)[],
): Promise<{ first: Res; rest: Res[]; answeredEarly: number; runs: string[] }> {
  const mark = batchRuns.length;
  const held = await holdLock(app, lock);
  let head: Sent | undefined;
  const queued: Sent[] = [];
  let answeredEarly = 0;
  try {
    head = send(first());
    await someoneWaitsForALock(app);
    for (const request of rest) queued.push(await sendQueued(packId, request));
    answeredEarly = [head, ...queued].filter((sent) => sent.answered()).length;
  } finally {
    await held.release();
  }
  const answers = { first: await head.response, rest: await Promise.all(queued.map((sent) => sent.response)) };
  return { ...answers, answeredEarly, runs: runsSince(mark, packId) };
}

t.test(`one pack's requests served a batch per transaction (${suiteServer})`, async (t) => {
  const app = await buildTestApp(t, { PURCHASE_RATE_LIMIT: '1000' });

  t.test('one batch of starts: the cap per fan, then sold_out, in arrival order', async (t) => {
    // Six packs: the first start takes one alone, the batch of seven shares the other five.
    const { pack } = await packInStatus(app, 'active', {
      pack: { name: 'Mixed starts', maxPerUser: 2, price: 0, cardsPerPack: 1 },
      pool: [{ quantity: 6 }],
    });
    const [head, f1, f2, f3, f4, f5] = (await fans(app, 'mixed', 6)) as [Fan, Fan, Fan, Fan, Fan, Fan];
    const order = [f2, f1, f3, f1, f4, f1, f5];
    const batch = await batchBehind(
      app,
      pack.id,
      packRow(pack.id),
      () => startPurchase(app, head, pack.id),
      order.map((fan) => () => startPurchase(app, fan, pack.id)),
    );
    t.equal(batch.answeredEarly, 0, 'all seven waited in the batcher behind the first start');
    t.same(batch.runs, ['1', '7'], 'two batches: the first start alone, then the seven');
    t.equal(batch.first.statusCode, 201, 'the first start reserves one pack');
    // Fan 1's third start is over the cap: purchase_limit_reached, checked before sold_out even
    // though the pack is full by then; fan 5 comes last and finds it sold out.
    t.same(
      batch.rest.map(outcome),
      ['201', '201', '201', '201', '201', '409 purchase_limit_reached', '409 sold_out'],
      'f2, f1, f3, f1 and f4 reserve; f1 a third time: purchase_limit_reached; f5: sold_out',
    );
    const created = batch.rest
      .filter((res) => res.statusCode === 201)
      .map((res) => res.json().data.createdAt as string);
    t.equal(
      new Set(created).size,
      1,
      'the five reservations of the batch were written by one statement (one createdAt)',
    );
    t.not(created[0], batch.first.json().data.createdAt, 'and not by the first start’s');

    const perFan = await sqlRows<{ user_id: string; n: number }>(
      app,
      sql`select user_id, count(*)::int as n from purchases where pack_id = ${pack.id} group by user_id order by user_id`,
    );
    t.same(
      perFan,
      [head, f1, f2, f3, f4]
        .map((fan) => ({ user_id: fan.id, n: fan === f1 ? 2 : 1 }))
        .sort((a, b) => (a.user_id < b.user_id ? -1 : 1)),
      'fan 1 holds 2, the first fan and fans 2-4 one each, fan 5 none',
    );
    t.same(await purchaseStatuses(app, pack.id), { pending: 6 }, 'six reservations, all pending');
    await assertKept(t, app, pack.id, 6, 'after the batch');
    t.equal(await publicAvailable(app, pack.id), 0, 'nothing left to reserve');
    await assertNoViolations(t, app);
  });

  t.test(
    'one batch of completes: a fan who cannot pay leaves the others be; a purchase named twice pays once',
    async (t) => {
      const price = 10;
      const { pack } = await packInStatus(app, 'active', {
        pack: { name: 'Mixed completes', price, cardsPerPack: 1 },
        pool: [{ quantity: 10 }],
      });
      const [head, rich, poor, other] = (await fans(app, 'payer', 4)) as [Fan, Fan, Fan, Fan];
      await fund(app, head, price);
      await fund(app, rich, 2 * price);
      await fund(app, poor, price - 5);
      await fund(app, other, price);
      const [p0, p1, pPoor, p2] = (await startedInTurn(app, [head, rich, poor, other], pack.id)) as [
        string,
        string,
        string,
        string,
      ];

      // A complete locks the purchases and wallets, and takes the pack's row last: the first one waits there.
      const batch = await batchBehind(
        app,
        pack.id,
        packRow(pack.id),
        () => completePurchase(app, head, pack.id, { purchaseId: p0 }),
        [
          () => completePurchase(app, rich, pack.id, { purchaseId: p1, clientSeed: 'rich seed' }),
          () => completePurchase(app, poor, pack.id, { purchaseId: pPoor }),
          () => completePurchase(app, other, pack.id, { purchaseId: p2 }),
          () => completePurchase(app, rich, pack.id, { purchaseId: p1, clientSeed: 'rich seed' }),
        ],
      );
      t.equal(batch.answeredEarly, 0, 'all four waited behind the first complete');
      t.same(batch.runs, ['1', '4'], 'two batches');
      t.equal(batch.first.statusCode, 200, 'the first complete sells');
      t.same(batch.rest.map(outcome), ['200', '409 insufficient_funds', '200', '200'], 'the poor fan alone is refused');
      t.same(batch.rest[3]?.json(), batch.rest[0]?.json(), 'the purchase named twice answers the same body twice');
      const completedAt = [batch.rest[0], batch.rest[2]].map((res) => res?.json().data.purchase.completedAt);
      t.equal(completedAt[0], completedAt[1], 'the batch completed its purchases at one moment');
      t.not(completedAt[0], batch.first.json().data.purchase.completedAt, 'in another transaction than the first');

      t.same(
        [await balance(app, head), await balance(app, rich), await balance(app, poor), await balance(app, other)],
        [0, price, price - 5, 0],
        'each payer debited once; the poor fan’s wallet untouched',
      );
      t.same(
        await purchaseDebits(app, rich),
        [{ reference: p1, amount: -price }],
        'one debit for the purchase named twice',
      );
      t.same(await purchaseDebits(app, poor), [], 'no debit of the poor fan');
      const [poorPurchase] = await sqlRows<{ status: string }>(
        app,
        sql`select status from purchases where id = ${pPoor}`,
      );
      t.equal(poorPurchase?.status, 'pending', 'the refused purchase stays pending');
      t.same(
        await purchaseStatuses(app, pack.id),
        { completed: 3, pending: 1 },
        'three completed, the poor fan’s pending',
      );
      const [owned] = await sqlRows<{ n: number }>(
        app,
        sql`select count(*)::int as n from user_packs where pack_id = ${pack.id}`,
      );
      t.equal(owned?.n, 3, 'three owned packs');
      t.equal((await salesOf(app, pack.id)).sold, 3, 'sold = 3');
      await assertKept(t, app, pack.id, 1, 'after the batch');
      await assertNoViolations(t, app);
    },
  );

  t.test('Idempotency-Keys inside one batch of starts', async (t) => {
    const { pack } = await packInStatus(app, 'active', {
      pack: { name: 'Keyed starts', price: 0, cardsPerPack: 1 },
      pool: [{ quantity: 3 }],
    });
    const { pack: elsewhere } = await packInStatus(app, 'active', {
      pack: { name: 'Another pack', price: 0, cardsPerPack: 1 },
      pool: [{ quantity: 3 }],
    });
    const [head, a, b, c, d] = (await fans(app, 'keyed', 5)) as [Fan, Fan, Fan, Fan, Fan];
    const [k1, k2] = [randomUUID(), randomUUID()];
    const keyed = (key: string, requestId: string) => ({ 'idempotency-key': key, 'x-request-id': requestId });

    const batch = await batchBehind(app, pack.id, packRow(pack.id), () => startPurchase(app, head, pack.id), [
      () => startPurchase(app, a, pack.id, keyed(k1, 'a-first')),
      () => startPurchase(app, a, pack.id, keyed(k1, 'a-twice')),
      () => startPurchase(app, b, pack.id),
      () => startPurchase(app, c, pack.id, keyed(k2, 'c-first')),
      () => startPurchase(app, d, pack.id),
    ]);
    t.equal(batch.answeredEarly, 0, 'all five waited behind the first start');
    t.same(batch.runs, ['1', '5'], 'two batches');
    t.equal(batch.first.statusCode, 201, 'the first start takes one of the three packs');
    const [aFirst, aTwice, bRes, cFirst] = batch.rest as [Res, Res, Res, Res, Res];
    t.same(
      batch.rest.map(outcome),
      ['201', '409 idempotency_key_in_use', '201', '409 sold_out', '409 sold_out'],
      'keyed and unkeyed each get their own answer; the key twice in one batch: 409 for the second',
    );
    t.equal(aFirst.headers['idempotent-replayed'], undefined, 'the first answer is no replay');
    t.equal(aTwice.headers['idempotent-replayed'], undefined, 'nor is the 409 for the key in use');
    t.equal(cFirst.json().error.requestId, 'c-first', 'a fresh refusal names its own request');
    t.equal(
      bRes.json().data.createdAt,
      aFirst.json().data.createdAt,
      'a keyed and an unkeyed start reserved in one statement',
    );

    const stored = await sqlRows<{ user_id: string; key: string; status_code: number }>(
      app,
      sql`select user_id, key, status_code from idempotency_keys where key = any(${ids([k1, k2])}) order by status_code`,
    );
    t.same(
      stored,
      [
        { user_id: a.id, key: k1, status_code: 201 },
        { user_id: c.id, key: k2, status_code: 409 },
      ],
      'one stored answer per key, the refusal too',
    );

    const retry = await startPurchase(app, a, pack.id, keyed(k1, 'a-retry'));
    t.equal(retry.statusCode, 201, 'a retry of the key afterwards');
    t.equal(retry.headers['idempotent-replayed'], 'true', 'is a replay');
    t.same(retry.json(), aFirst.json(), 'of the same body');
    const reused = await startPurchase(app, a, elsewhere.id, keyed(k1, 'a-elsewhere'));
    t.same(
      [outcome(reused), reused.headers['idempotent-replayed']],
      ['422 idempotency_key_reused', undefined],
      'the key with another pack: 422',
    );

    // A pack frees up: the stored refusal is still the answer to its key, while a new request reserves.
    expectOk(t, await cancelPurchase(app, head, pack.id, batch.first.json().data.id), 'the first fan cancels');
    const cRetry = await startPurchase(app, c, pack.id, keyed(k2, 'c-retry'));
    t.same(
      [outcome(cRetry), cRetry.headers['idempotent-replayed']],
      ['409 sold_out', 'true'],
      'the refused key replays sold_out, though a pack is free now',
    );
    t.same(
      cRetry.json(),
      { ...cFirst.json(), error: { ...cFirst.json().error, requestId: 'c-retry' } },
      'the same error, naming the replaying request',
    );
    const cFresh = await startPurchase(app, c, pack.id);
    t.equal(cFresh.statusCode, 201, 'without the key, the fan reserves the freed pack');

    // A key another transaction holds: a batch of the other pack took it, then waits for that pack's row.
    const k3 = randomUUID();
    const otherRow = await holdLock(app, packRow(elsewhere.id));
    let holder: Sent | undefined;
    try {
      holder = send(startPurchase(app, b, elsewhere.id, keyed(k3, 'b-elsewhere')));
      await someoneWaitsForALock(app);
      const clash = await startPurchase(app, b, pack.id, keyed(k3, 'b-here'));
      t.equal(
        outcome(clash),
        '409 idempotency_key_in_use',
        'the key while a batch of another pack holds it: 409 at once',
      );
    } finally {
      await otherRow.release();
    }
    t.equal((await holder.response).statusCode, 201, 'the batch holding the key reserves once the row is free');
    const afterClash = await startPurchase(app, b, pack.id, keyed(k3, 'b-here-again'));
    t.equal(
      outcome(afterClash),
      '422 idempotency_key_reused',
      'the refused 409 stored nothing: the key answers for the other pack',
    );

    t.same(
      await purchaseStatuses(app, pack.id),
      { cancelled: 1, pending: 3 },
      'a, b and c hold the three packs; nothing more was written',
    );
    await assertKept(t, app, pack.id, 3, 'after the replays');
    await assertKept(t, app, elsewhere.id, 1, 'the other pack: the start that held the key');
    await assertNoViolations(t, app);
  });

  t.test(
    'cancel and complete take reservations off the kept count; expired ones answer purchase_expired',
    async (t) => {
      const price = 10;
      const { pack } = await packInStatus(app, 'active', {
        pack: { name: 'Lapsing', price, cardsPerPack: 1 },
        pool: [{ quantity: 10 }],
      });
      const [canceller, late1, late2, head, live, lapsing] = (await fans(app, 'lapse', 6, price)) as [
        Fan,
        Fan,
        Fan,
        Fan,
        Fan,
        Fan,
      ];

      const r = await started(app, canceller, pack.id);
      await assertKept(t, app, pack.id, 1, 'a reservation');
      const cancelled = await cancelPurchase(app, canceller, pack.id, r);
      t.same([cancelled.statusCode, cancelled.json().data.status], [200, 'cancelled'], 'a live reservation cancels');
      await assertKept(t, app, pack.id, 0, 'cancelled');

      const [e1, e2] = (await startedInTurn(app, [late1, late2], pack.id)) as [string, string];
      await lapse(app, [e1, e2]);
      t.equal(
        await publicAvailable(app, pack.id),
        10,
        'expired reservations count as free before anything reclaims them',
      );
      await assertKept(t, app, pack.id, 2, 'two lapsed, not reclaimed');

      const lateCancel = await cancelPurchase(app, late1, pack.id, e1);
      t.equal(outcome(lateCancel), '409 purchase_expired', 'cancelling an expired reservation');
      // The refused cancel rolls back: the reservation is left for a start or the job to reclaim.
      const [e1Row] = await sqlRows<{ status: string }>(app, sql`select status from purchases where id = ${e1}`);
      t.equal(e1Row?.status, 'pending', 'the refused cancel marked nothing');
      await assertKept(t, app, pack.id, 2, 'after the refused cancel');

      const lateComplete = await completePurchase(app, late2, pack.id, { purchaseId: e2 });
      t.equal(outcome(lateComplete), '409 purchase_expired', 'completing an expired reservation');
      t.same(
        await purchaseStatuses(app, pack.id),
        { cancelled: 1, expired: 1, pending: 1 },
        'the complete marked it expired',
      );
      await assertKept(t, app, pack.id, 1, 'the complete took it off the count');
      t.same([await balance(app, late1), await balance(app, late2)], [price, price], 'nothing debited');

      // One batch completing a lapsed reservation and a live one: one statement marks one expired and sells the other.
      const [h, l, m] = (await startedInTurn(app, [head, live, lapsing], pack.id)) as [string, string, string];
      t.same(
        await purchaseStatuses(app, pack.id),
        { cancelled: 1, expired: 2, pending: 3 },
        'the first of these starts reclaimed e1 on its way',
      );
      await lapse(app, [m]);
      const batch = await batchBehind(
        app,
        pack.id,
        packRow(pack.id),
        () => completePurchase(app, head, pack.id, { purchaseId: h }),
        [
          () => completePurchase(app, lapsing, pack.id, { purchaseId: m }),
          () => completePurchase(app, live, pack.id, { purchaseId: l }),
        ],
      );
      t.equal(batch.answeredEarly, 0, 'both completes waited behind the first');
      t.same(batch.runs, ['1', '2'], 'two batches');
      t.same(
        [outcome(batch.first), ...batch.rest.map(outcome)],
        ['200', '409 purchase_expired', '200'],
        'the lapsed one refused, the live one sold',
      );
      t.same(await purchaseStatuses(app, pack.id), { cancelled: 1, completed: 2, expired: 3 }, 'nothing left pending');
      await assertKept(t, app, pack.id, 0, 'after the batch');
      const balances = [await balance(app, head), await balance(app, live), await balance(app, lapsing)];
      t.same(balances, [0, 0, price], 'the two sold paid; the lapsed fan paid nothing');
      t.equal((await salesOf(app, pack.id)).sold, 2, 'sold = 2');
      await assertNoViolations(t, app);
    },
  );

  t.test(
    'archiving a pack while its completes are queued: pack_not_on_sale, nothing debited, nothing sold',
    async (t) => {
      const price = 10;
      const { pack } = await packInStatus(app, 'active', {
        pack: { name: 'Archived mid-batch', price, cardsPerPack: 1 },
        pool: [{ quantity: 10 }],
      });
      const [c0, c1, c2] = (await fans(app, 'archive', 3, price)) as [Fan, Fan, Fan];
      const [p0, p1, p2] = (await startedInTurn(app, [c0, c1, c2], pack.id)) as [string, string, string];

      // The first complete waits for its purchase's row; the batch behind it for theirs, so that it
      // reads the pack on sale before the archive and writes after it.
      const mark = batchRuns.length;
      const first = await holdLock(app, purchaseRows([p0]));
      const second = await holdLock(app, purchaseRows([p1, p2]));
      let head: Sent | undefined;
      const queued: Sent[] = [];
      try {
        head = send(completePurchase(app, c0, pack.id, { purchaseId: p0 }));
        await someoneWaitsForALock(app);
        queued.push(await sendQueued(pack.id, () => completePurchase(app, c1, pack.id, { purchaseId: p1 })));
        queued.push(await sendQueued(pack.id, () => completePurchase(app, c2, pack.id, { purchaseId: p2 })));
        await first.release();
        t.equal(outcome(await head.response), '200', 'the first complete sells while the pack is on sale');
        await someoneWaitsForALock(app);
        t.equal(queued.filter((sent) => sent.answered()).length, 0, 'the batch of two waits for its purchases');
        t.equal(
          (await applyAction(app, pack.id, { action: 'archive' })).status,
          'archived',
          'the pack is archived meanwhile',
        );
      } finally {
        await first.release();
        await second.release();
      }
      const answers = await Promise.all(queued.map((sent) => sent.response));
      t.same(
        answers.map(outcome),
        ['409 pack_not_on_sale', '409 pack_not_on_sale'],
        'the batch is undone and run again, and finds the pack archived',
      );
      t.same(
        runsSince(mark, pack.id),
        ['1', '2'],
        'batches: the first alone, then the two together (its transaction run again, as after a serialization failure)',
      );
      t.same(
        [await balance(app, c0), await balance(app, c1), await balance(app, c2)],
        [0, price, price],
        'only the first fan paid',
      );
      t.same(
        [await purchaseDebits(app, c1), await purchaseDebits(app, c2)],
        [[], []],
        'no ledger entry for the refused',
      );
      t.same(await purchaseStatuses(app, pack.id), { completed: 1, pending: 2 }, 'the two refused stay pending');
      const [owned] = await sqlRows<{ n: number }>(
        app,
        sql`select count(*)::int as n from user_packs where pack_id = ${pack.id}`,
      );
      t.equal(owned?.n, 1, 'one owned pack');
      t.equal((await salesOf(app, pack.id)).sold, 1, 'sold = 1');
      await assertKept(t, app, pack.id, 2, 'after the archive');
      await assertNoViolations(t, app);
    },
  );

  t.test('a lone complete whose pack is archived between its read and its write', async (t) => {
    // The same race with a batch of one: its first statement reads the pack on sale (it started
    // before the archive), its write finds the pack archived; its transaction is run again and
    // finds the pack not on sale.
    const price = 10;
    const { pack } = await packInStatus(app, 'active', {
      pack: { name: 'Archived under a lone complete', price, cardsPerPack: 1 },
      pool: [{ quantity: 10 }],
    });
    const [fan] = (await fans(app, 'lone', 1, price)) as [Fan];
    const purchaseId = await started(app, fan, pack.id);
    const mark = batchRuns.length;
    const held = await holdLock(app, purchaseRows([purchaseId]));
    let lone: Sent | undefined;
    try {
      lone = send(completePurchase(app, fan, pack.id, { purchaseId }));
      await someoneWaitsForALock(app);
      t.equal(
        (await applyAction(app, pack.id, { action: 'archive' })).status,
        'archived',
        'archived while the complete waits',
      );
    } finally {
      await held.release();
    }
    const answer = await (lone as Sent).response;
    t.equal(
      outcome(answer),
      '409 pack_not_on_sale',
      `a lone complete of a pack archived meanwhile (got ${answer.statusCode} ${answer.body})`,
    );
    t.same(runsSince(mark, pack.id), ['1'], 'one batch of one, its transaction run again inside it');
    t.equal(await balance(app, fan), price, 'nothing debited');
    t.same(await purchaseStatuses(app, pack.id), { pending: 1 }, 'nothing sold');
    await assertKept(t, app, pack.id, 1, 'after the refused complete');
    await assertNoViolations(t, app);
  });

  t.test('opens: a keyed and an unkeyed open of two owned packs in one batch', async (t) => {
    const cardsPerPack = 2;
    const { pack } = await packInStatus(app, 'active', {
      pack: { name: 'Opened in a batch', price: 0, cardsPerPack },
      pool: [{ quantity: 10 }, { quantity: 10, weight: 2 }],
    });
    const [head, fan] = (await fans(app, 'opener', 2)) as [Fan, Fan];
    const headPack = (await buyPack(app, head, pack.id)).userPackId;
    const [up1, up2] = [(await buyPack(app, fan, pack.id)).userPackId, (await buyPack(app, fan, pack.id)).userPackId];
    const key = randomUUID();

    // An open takes the pack's row (its opened count) after locking the owned packs: the first waits there.
    const batch = await batchBehind(
      app,
      pack.id,
      packRow(pack.id),
      () => openPack(app, head, pack.id, { userPackId: headPack }),
      [
        () => openPack(app, fan, pack.id, { userPackId: up1 }, { 'idempotency-key': key }),
        () => openPack(app, fan, pack.id, { userPackId: up2 }),
      ],
    );
    t.equal(batch.answeredEarly, 0, 'both opens waited behind the first');
    t.same(batch.runs, ['1', '2'], 'two batches');
    t.same([outcome(batch.first), ...batch.rest.map(outcome)], ['200', '200', '200'], 'all three open');
    type Opened = { userPackId: string; openedAt: string; items: unknown[] };
    const [keyed, unkeyed] = batch.rest.map((res) => res.json().data) as [Opened, Opened];
    t.same([keyed.userPackId, unkeyed.userPackId], [up1, up2], 'each open its own pack');
    t.equal(keyed.openedAt, unkeyed.openedAt, 'opened in one batch (one moment)');
    t.not(keyed.openedAt, batch.first.json().data.openedAt, 'not in the first one’s');
    t.same([keyed.items.length, unkeyed.items.length], [cardsPerPack, cardsPerPack], 'cardsPerPack items each');

    const replay = await openPack(app, fan, pack.id, { userPackId: up1 }, { 'idempotency-key': key });
    t.same([replay.statusCode, replay.headers['idempotent-replayed']], [200, 'true'], 'the keyed open replays');
    t.same(replay.json(), batch.rest[0]?.json(), 'the same body');
    const reused = await openPack(app, fan, pack.id, { userPackId: up2 }, { 'idempotency-key': key });
    t.equal(outcome(reused), '422 idempotency_key_reused', 'the key with the other pack: 422');
    const again = await openPack(app, fan, pack.id, { userPackId: up2 });
    t.same(
      [again.statusCode, again.headers['idempotent-replayed']],
      [200, undefined],
      'the unkeyed open asked again answers its stored result',
    );
    t.same(again.json(), batch.rest[1]?.json(), 'the same result');

    const [pulled] = await sqlRows<{ pulls: number }>(
      app,
      sql`select count(*)::int as pulls from pulls p join user_packs u on u.id = p.user_pack_id where u.pack_id = ${pack.id}`,
    );
    t.equal(pulled?.pulls, 3 * cardsPerPack, 'three opens drew cardsPerPack each, once');
    t.equal((await salesOf(app, pack.id)).opened, 3, 'opened = 3');
    await assertNoViolations(t, app);
  });

  t.test('an admin change counts live reservations exactly while expired ones are not reclaimed', async (t) => {
    const { pack } = await packInStatus(app, 'active', {
      pack: { name: 'Supply cut', price: 0, cardsPerPack: 1 },
      pool: [{ quantity: 10 }],
    });
    const buyers = await fans(app, 'supply', 7);
    const fan = (i: number) => buyers[i] as Fan;
    await buyPack(app, fan(0), pack.id);
    await buyPack(app, fan(1), pack.id);
    const pending = await startedInTurn(app, buyers.slice(2, 6), pack.id);
    // Supply changes only in a draft: archived and restored while every reservation is still live.
    await applyAction(app, pack.id, { action: 'archive' });
    await applyAction(app, pack.id, { action: 'restore' });
    await lapse(app, pending.slice(0, 2));
    await assertKept(t, app, pack.id, 4, 'two live and two lapsed reservations, none reclaimed');

    const patch = (body: Record<string, unknown>) =>
      app.inject({ method: 'PATCH', url: `/api/admin/packs/${pack.id}`, headers: bearer(ADMIN), payload: body });
    const below = await patch({ supply: 3 });
    t.equal(outcome(below), '409 supply_below_sales', 'supply below sold + live');
    t.same(
      below.json().error.details,
      [{ path: '/supply', message: 'must be at least 4' }],
      'the floor is 2 sold + 2 live',
    );
    // The lapsed ones are reclaimed before the change's own transaction, each round in one of its
    // own: housekeeping, kept whether or not the change is refused.
    t.same(
      await purchaseStatuses(app, pack.id),
      { completed: 2, expired: 2, pending: 2 },
      'the lapsed ones reclaimed even by a refused change',
    );
    await assertKept(t, app, pack.id, 2, 'after the refused change');

    // Were the lapsed ones still counted, sold + kept (6) would exceed the new supply and packs_reserved_check would refuse it (a 500).
    const cut = await patch({ supply: 4 });
    t.equal(cut.statusCode, 200, `supply down to sold + live (${cut.body})`);
    t.equal(cut.json().data.supply, 4, 'supply = 4');
    t.same(
      await purchaseStatuses(app, pack.id),
      { completed: 2, expired: 2, pending: 2 },
      'the lapsed reservations stay reclaimed',
    );
    await assertKept(t, app, pack.id, 2, 'after the change');

    await applyAction(app, pack.id, { action: 'publish' });
    const full = await startPurchase(app, fan(6), pack.id);
    t.equal(outcome(full), '409 sold_out', 'published again: 2 sold + 2 live reservations fill the supply');
    const done = await completePurchase(app, fan(4), pack.id, { purchaseId: pending[2] });
    t.equal(done.statusCode, 200, 'a live reservation completes');
    const sales = await salesOf(app, pack.id);
    t.same([sales.sold, sales.available], [3, 0], 'sold 3; nothing available');
    await assertKept(t, app, pack.id, 1, 'at the end');
    await assertNoViolations(t, app);
  });
});

t.test('expired reservations are reclaimed lazily, in bounded rounds, then by the job', async (t) => {
  // Long enough for 350 starts to be made before the first of them expires, even on a loaded machine.
  const ttlMs = 3000;
  const cronSecret = 'cron-secret-0123456789abcdef';
  const app = await buildTestApp(t, {
    PURCHASE_TTL: `${ttlMs} ms`,
    CRON_SECRET: cronSecret,
    CRON_INTERNAL: 'false',
    PURCHASE_RATE_LIMIT: '1000',
  });
  const capacity = 350;
  const { pack } = await packInStatus(app, 'active', {
    pack: { name: 'Lazy reclaim', price: 0, cardsPerPack: 1 },
    pool: [{ quantity: capacity }],
  });
  const crowd = await fans(app, 'crowd', 5);
  const [x, y] = (await fans(app, 'late', 2)) as [Fan, Fan];
  /** Waits until every purchase answered has expired (by the app's clock, which is this one). */
  const expiryOf = async (responses: Res[]) => {
    const last = Math.max(...responses.map((res) => Date.parse(res.json().data.expiresAt)));
    await sleep(Math.max(0, last - Date.now() + 50));
  };

  const filled: Res[] = [];
  for (let wave = 0; wave < capacity / 50; wave++) {
    filled.push(
      ...(await Promise.all(
        Array.from({ length: 50 }, (_, i) => startPurchase(app, crowd[i % crowd.length] as Fan, pack.id)),
      )),
    );
  }
  t.same(tally(filled), { 201: capacity }, `${capacity} reservations fill the pack`);
  t.same(await purchaseStatuses(app, pack.id), { pending: capacity }, 'none expired while the pack filled');
  t.equal((await getAdminPack(app, pack.id)).available, 0, 'nothing available while they are live');

  await expiryOf(filled);
  // The public view is cached up to 5 s (CATALOG_CACHE_TTL_MS, the documented staleness of
  // `available`): read once, fresh; later steps read the admin view, which is not cached.
  t.equal(
    await publicAvailable(app, pack.id),
    capacity,
    'all expired: the public view counts them as free before anything reclaims them',
  );
  t.equal((await getAdminPack(app, pack.id)).available, capacity, 'and so does the admin view');
  await assertKept(t, app, pack.id, capacity, 'expired, not reclaimed');

  // By the kept count the pack is full, so this start would refuse: it reclaims a round of 100
  // first, and reclaims 100 more on its way as every start does.
  const first = await startPurchase(app, x, pack.id);
  t.equal(first.statusCode, 201, 'a start on a pack full of expired reservations succeeds');
  t.same(
    await purchaseStatuses(app, pack.id),
    { expired: 200, pending: capacity - 200 + 1 },
    'it reclaimed two rounds of 100 (one so as not to refuse, one on its way), not all 350',
  );
  await assertKept(t, app, pack.id, capacity - 200 + 1, 'after the first start');
  const liveFirst = Date.parse(first.json().data.expiresAt);
  const availableAfterFirst = (await getAdminPack(app, pack.id)).available;
  t.ok(Date.now() < liveFirst, 'checked while the new reservation is live');
  t.equal(availableAfterFirst, capacity - 1, 'available: every pack but the live reservation');

  // Not sold out by the kept count (151 of 350): only the round every start reclaims on its way.
  const second = await startPurchase(app, y, pack.id);
  t.equal(second.statusCode, 201, 'a second start');
  t.same(
    await purchaseStatuses(app, pack.id),
    { expired: 300, pending: capacity - 300 + 2 },
    'one round of 100, though 150 had expired',
  );
  await assertKept(t, app, pack.id, capacity - 300 + 2, 'after the second start');
  const availableAfterSecond = (await getAdminPack(app, pack.id)).available;
  t.ok(Date.now() < liveFirst, 'checked while both new reservations are live');
  t.equal(availableAfterSecond, capacity - 2, 'available: every pack but the two live reservations');

  // The job reclaims the rest: the last 50 of the crowd's and the two new ones once they expire too.
  await expiryOf([first, second]);
  const run = await app.inject({
    method: 'POST',
    url: '/api/cron/expire-purchases',
    headers: { authorization: `Bearer ${cronSecret}` },
  });
  t.equal(run.statusCode, 200, 'the expiry job runs');
  t.same(run.json().data, { job: 'expire-purchases', processed: 52, expired: 52 }, 'the job marks the 52 left');
  t.same(await purchaseStatuses(app, pack.id), { expired: capacity + 2 }, 'every reservation marked expired');
  await assertKept(t, app, pack.id, 0, 'after the job');
  t.equal((await getAdminPack(app, pack.id)).available, capacity, 'the whole pack is free again');
  await assertNoViolations(t, app);
});

t.test(
  'admission: a pack whose batches would keep a start waiting past DATABASE_QUEUE_LIMIT refuses it at once',
  async (t) => {
    const limitMs = 200;
    const app = await buildTestApp(t, { DATABASE_QUEUE_LIMIT: `${limitMs} ms`, PURCHASE_RATE_LIMIT: '1000' });
    const { pack: busy } = await packInStatus(app, 'active', {
      pack: { name: 'Busy pack', price: 0, cardsPerPack: 1 },
      pool: [{ quantity: 50 }],
    });
    const { pack: quiet } = await packInStatus(app, 'active', {
      pack: { name: 'Quiet pack', price: 0, cardsPerPack: 1 },
      pool: [{ quantity: 50 }],
    });
    const [fan] = (await fans(app, 'admitted', 1)) as [Fan];
    const start = (packId: string) => () => startPurchase(app, fan, packId);
    /** A response that must arrive without waiting for the lock held meanwhile (10 s: a loaded machine, not a queue). */
    const promptly = (sent: Sent, what: string) => {
      const late = sleep(10_000, undefined, { ref: false }).then(() =>
        Promise.reject(new Error(`${what}: no answer while the lock was held`)),
      );
      return Promise.race([sent.response, late]);
    };

    // Nothing measured yet: a start queued behind a running batch is admitted. The batch it waits
    // behind is held 600 ms, three times the limit, which the batcher then takes as a batch's time;
    // the start, queued past the limit, is served all the same when its turn comes: its batch is
    // the next one, and a retry would cost the database the same work (the batcher's own tests
    // show late requests left behind a full batch refused).
    const calibration = await holdLock(app, packRow(busy.id));
    let measured: Sent[] = [];
    try {
      measured = [send(start(busy.id)())];
      await someoneWaitsForALock(app);
      measured.push(await sendQueued(busy.id, start(busy.id)));
      await sleep(3 * limitMs);
    } finally {
      await calibration.release();
    }
    t.same(
      (await Promise.all(measured.map((sent) => sent.response))).map(outcome),
      ['201', '201'],
      'the running start is served; so is the one queued past the limit, when its turn comes',
    );

    const held = await holdLock(app, packRow(busy.id));
    let running: Sent | undefined;
    const refused: Res[] = [];
    let elsewhere: Res | undefined;
    try {
      running = send(start(busy.id)());
      await someoneWaitsForALock(app);
      for (let i = 0; i < 3; i++) refused.push(await promptly(send(start(busy.id)()), 'a start of the busy pack'));
      elsewhere = await promptly(send(start(quiet.id)()), 'a start of another pack');
      t.notOk(running.answered(), 'the batch of the busy pack still waits');
    } finally {
      await held.release();
    }
    t.same(
      refused.map(outcome),
      ['503 overloaded', '503 overloaded', '503 overloaded'],
      'starts queued behind a batch that takes past the limit: 503 at once',
    );
    t.ok(
      refused.every((res) => res.headers['retry-after'] === '1'),
      'with Retry-After: 1',
    );
    t.equal(elsewhere?.statusCode, 201, 'another pack is not refused');
    t.equal((await (running as Sent).response).statusCode, 201, 'the running batch completes once the lock is free');
    const after = await startPurchase(app, fan, busy.id);
    t.equal(after.statusCode, 201, 'the busy pack, idle again, admits a start');
    await assertKept(t, app, busy.id, 4, 'the refused starts wrote nothing');
    await assertKept(t, app, quiet.id, 1, 'the other pack');
    await assertNoViolations(t, app);
  },
);
