import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { KeyedBatcher } from '../../../../plugins/app/database/batcher.js';
import { overloadedError } from '../../../../plugins/app/errors.js';

/**
 * The group commit of work on one key. `run` is a stand-in whose every call is recorded and
 * answered by the test when it chooses, so the tests decide what runs concurrently with what.
 */

interface Call {
  key: string;
  items: string[];
  answer: (results: (string | Error)[]) => void;
  fail: (error: unknown) => void;
}

function recorder(maxBatch: number) {
  const calls: Call[] = [];
  const batcher = new KeyedBatcher<string, string>(
    (key, items) => new Promise((answer, fail) => calls.push({ key, items: [...items], answer, fail })),
    maxBatch,
  );
  return { calls, batcher };
}

/** Lets the batcher see a settled run and start its next batch (promise jobs, then one macrotask). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Where a promise stands now, without waiting for it. */
async function stateOf<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown } | 'pending'> {
  const pending = Symbol('pending');
  try {
    const value = await Promise.race([promise, settle().then(() => pending)]);
    return value === pending ? 'pending' : { value: value as T };
  } catch (error) {
    return { error };
  }
}

/** Every item answered with its own name, upper-cased. */
const echo = (call: Call) => call.answer(call.items.map((item) => item.toUpperCase()));

const callAt = (calls: Call[], index: number): Call => {
  const call = calls[index];
  if (!call) throw new Error(`no call ${index} (${calls.length} made)`);
  return call;
};

t.test('a request at an idle key starts at once: nothing waits for a batch to fill', async (t) => {
  const { calls, batcher } = recorder(10);
  const a = batcher.submit('pack-1', 'a');
  t.equal(calls.length, 1, 'run was called within submit itself');
  t.has(callAt(calls, 0), { key: 'pack-1', items: ['a'] }, 'with that one item');
  echo(callAt(calls, 0));
  t.equal(await a, 'A');
});

t.test(
  'requests arriving while a batch runs form the next batch, up to maxBatch; the rest the one after',
  async (t) => {
    const { calls, batcher } = recorder(3);
    const first = batcher.submit('pack', 'a');
    const waiting = ['b', 'c', 'd', 'e', 'f'].map((item) => batcher.submit('pack', item));
    t.equal(calls.length, 1, 'nothing else runs while the first batch does');

    echo(callAt(calls, 0));
    await settle();
    t.equal(calls.length, 2);
    t.same(callAt(calls, 1).items, ['b', 'c', 'd'], 'the next batch takes maxBatch of those waiting, in arrival order');
    // One arriving now joins the queue behind e and f.
    const late = batcher.submit('pack', 'g');
    t.equal(calls.length, 2, 'still one batch at a time');

    echo(callAt(calls, 1));
    await settle();
    t.same(callAt(calls, 2).items, ['e', 'f', 'g'], 'then the rest');
    echo(callAt(calls, 2));
    t.same(
      await Promise.all([first, ...waiting, late]),
      ['A', 'B', 'C', 'D', 'E', 'F', 'G'],
      'each request gets its own result',
    );
    t.equal(calls.length, 3, 'three batches in all');
  },
);

t.test('keys are independent: a slow key does not hold another', async (t) => {
  const { calls, batcher } = recorder(10);
  const slow = batcher.submit('slow-pack', 's');
  const queuedBehindSlow = batcher.submit('slow-pack', 's2');
  const fast = batcher.submit('fast-pack', 'f');
  t.equal(calls.length, 2, 'the other key started at once');
  t.has(callAt(calls, 1), { key: 'fast-pack', items: ['f'] });

  echo(callAt(calls, 1));
  t.equal(await fast, 'F', 'answered while the slow key is still running');
  t.equal(await stateOf(slow), 'pending');
  t.equal(await stateOf(queuedBehindSlow), 'pending', 'the slow key queues only its own requests');

  echo(callAt(calls, 0));
  await settle();
  t.has(callAt(calls, 2), { key: 'slow-pack', items: ['s2'] });
  echo(callAt(calls, 2));
  t.same(await Promise.all([slow, queuedBehindSlow]), ['S', 'S2']);
});

/** A batcher with one batch running on `key` and `items` queued behind it, the next batch. */
async function batchQueued(items: string[], maxBatch = 10) {
  const { calls, batcher } = recorder(maxBatch);
  const blocker = batcher.submit('pack', 'blocker');
  const promises = items.map((item) => batcher.submit('pack', item));
  // Each is looked at as it settles: a rejection nobody awaits yet must not count as unhandled.
  const states = promises.map((promise) =>
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
  );
  echo(callAt(calls, 0));
  await blocker;
  await settle();
  return { calls, batcher, states, batch: callAt(calls, 1) };
}

t.test('each item gets its own result, or its own error when run answers an Error for it', async (t) => {
  const { calls, states, batch } = await batchQueued(['a', 'b', 'c']);
  t.same(batch.items, ['a', 'b', 'c']);
  const refusal = new Error('insufficient funds for b');
  batch.answer(['A', refusal, 'C']);
  const [a, b, c] = await Promise.all(states);
  t.same(a, { value: 'A' });
  t.equal((b as { error: unknown }).error, refusal, 'b is rejected with the very Error answered for it');
  t.same(c, { value: 'C' }, 'and the others are not');
  t.equal(calls.length, 2, 'an answered Error is an outcome: nothing runs again');
});

/** Errors that say the database cannot do the work now: toErrorResponse maps each to a 503. */
const UNAVAILABLE: [string, () => unknown][] = [
  ['overloaded (the queue limit)', () => overloadedError(1)],
  ['a lost connection (SQLSTATE 08006)', () => Object.assign(new Error('terminating connection'), { code: '08006' })],
  ['the driver losing its socket', () => new Error('Connection terminated unexpectedly')],
  [
    "a statement timeout wrapped in Drizzle's query error",
    () =>
      new Error('Failed query: select 1', {
        cause: Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      }),
  ],
];

for (const [what, make] of UNAVAILABLE) {
  t.test(`a batch refused as a 503 (${what}) rejects every item with that error, and runs none alone`, async (t) => {
    const { calls, batcher, states, batch } = await batchQueued(['a', 'b', 'c']);
    const error = make();
    batch.fail(error);
    const outcomes = await Promise.all(states);
    t.same(
      outcomes.map((outcome) => ('error' in outcome ? outcome.error === error : 'resolved')),
      [true, true, true],
      'each item rejected with the same error',
    );
    t.equal(calls.length, 2, 'no item was run again alone: the database could not have done it either');

    // The key was forgotten: the next request starts at once.
    const later = batcher.submit('pack', 'z');
    t.equal(calls.length, 3);
    t.same(callAt(calls, 2).items, ['z']);
    echo(callAt(calls, 2));
    t.equal(await later, 'Z');
  });
}

t.test(
  'a batch that throws any other error is run again item by item: one bad item cannot fail the others',
  async (t) => {
    const { calls, batcher, states, batch } = await batchQueued(['a', 'b', 'c', 'd']);
    // A constraint violation from one of the items: the transaction of the batch is gone.
    batch.fail(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }));
    await settle();
    t.equal(calls.length, 3, 'then the first item runs alone');
    t.same(callAt(calls, 2).items, ['a']);
    // Arriving while items are rerun: waits for the reruns, then forms the next batch.
    const late = batcher.submit('pack', 'late');

    echo(callAt(calls, 2));
    await settle();
    t.same(callAt(calls, 3).items, ['b'], 'one at a time, in order');
    const bad = Object.assign(new Error('b breaks a constraint'), { code: '23514' });
    callAt(calls, 3).fail(bad);
    await settle();
    t.same(callAt(calls, 4).items, ['c']);
    const refusal = new Error('c is refused');
    callAt(calls, 4).answer([refusal]);
    await settle();
    t.same(callAt(calls, 5).items, ['d']);
    echo(callAt(calls, 5));
    await settle();
    t.same(callAt(calls, 6).items, ['late'], 'what arrived meanwhile is the next batch');
    echo(callAt(calls, 6));

    const [a, b, c, d] = await Promise.all(states);
    t.same(a, { value: 'A' });
    t.equal((b as { error: unknown }).error, bad, 'the item that fails alone is rejected with its own error');
    t.equal((c as { error: unknown }).error, refusal, 'an Error answered for an item alone rejects it');
    t.same(d, { value: 'D' });
    t.equal(await late, 'LATE');
    t.equal(calls.length, 7);
  },
);

t.test('a batch of one that throws is rejected with its error (running it alone again would repeat it)', async (t) => {
  const { calls, batcher } = recorder(10);
  const only = batcher.submit('pack', 'a');
  const bug = new TypeError('a bug');
  callAt(calls, 0).fail(bug);
  await t.rejects(only, bug);
  t.equal(calls.length, 1, 'run once');
});

t.test('a 503 while items are run alone rejects that item only', async (t) => {
  const { calls, states, batch } = await batchQueued(['a', 'b']);
  batch.fail(new Error('a bug'));
  await settle();
  const down = Object.assign(new Error('terminating connection'), { code: '57P01' });
  callAt(calls, 2).fail(down);
  await settle();
  echo(callAt(calls, 3));
  const [a, b] = await Promise.all(states);
  t.equal((a as { error: unknown }).error, down);
  t.same(b, { value: 'B' });
});

t.test(
  'expectedWaitMs: nothing at an idle key; then the running batch and the full batches queued, at the average batch time',
  async (t) => {
    const maxBatch = 4;
    const { calls, batcher } = recorder(maxBatch);
    t.equal(batcher.expectedWaitMs('pack'), 0, 'an idle key that never ran');

    // Batches whose time the test decides: answered after BATCH_MS. Timers are never early by more
    // than a millisecond, and late by any amount on a loaded machine: bounds below tight, above loose.
    const BATCH_MS = 60;
    const first = batcher.submit('pack', 'a');
    t.ok(batcher.expectedWaitMs('pack') < BATCH_MS, 'nothing measured yet: only how long the batch has run so far');
    await sleep(BATCH_MS);
    echo(callAt(calls, 0));
    await first;
    t.equal(batcher.expectedWaitMs('pack'), 0, 'idle again: a request would start at once, whatever batches took');

    const running = batcher.submit('pack', 'b');
    const runningSince = performance.now();
    const average = batcher.expectedWaitMs('pack');
    t.ok(
      average >= BATCH_MS - 5 && average < BATCH_MS + 5000,
      `with a batch running and none queued: one batch time (${average.toFixed(1)} ms)`,
    );

    // Waits read at one instant share one average: each is a whole number of batch times.
    const queued: Promise<string>[] = [];
    const queueTo = (length: number) => {
      while (queued.length < length) queued.push(batcher.submit('pack', `q${queued.length}`));
    };
    const lengths = [1, maxBatch - 1, maxBatch, maxBatch + 1, 2 * maxBatch - 1, 2 * maxBatch, 2 * maxBatch + 3];
    const waits = lengths.map((length) => {
      queueTo(length);
      return [length, batcher.expectedWaitMs('pack')];
    });
    t.same(
      waits,
      lengths.map((length) => [length, (1 + Math.floor(length / maxBatch)) * average]),
      '(1 + floor(queued / maxBatch)) x the average batch time',
    );
    t.same(
      waits.map(([, wait]) => Math.round((wait as number) / average)),
      [1, 1, 2, 2, 2, 3, 3],
      'one batch time up to maxBatch - 1 queued, two from maxBatch, three from 2 x maxBatch',
    );
    t.equal(calls.length, 2, 'nothing queued has started');

    // A slower batch raises the average (weighted towards the latest), and the wait with it: this
    // one runs at least twice the average, whatever the machine's load did to the first.
    while (performance.now() - runningSince < 2 * average + 20) await sleep(BATCH_MS);
    echo(callAt(calls, 1));
    await running;
    await settle();
    t.same(callAt(calls, 2).items, ['q0', 'q1', 'q2', 'q3'], 'the next batch started');
    const raised = batcher.expectedWaitMs('pack');
    t.ok(
      raised / 2 > average,
      `7 queued: 2 batch times, at an average that grew (${(raised / 2).toFixed(1)} ms > ${average.toFixed(1)} ms)`,
    );

    // The rest drains a batch at a time.
    echo(callAt(calls, 2));
    await settle();
    t.same(callAt(calls, 3).items, ['q4', 'q5', 'q6', 'q7']);
    echo(callAt(calls, 3));
    await settle();
    t.same(callAt(calls, 4).items, ['q8', 'q9', 'q10']);
    echo(callAt(calls, 4));
    t.same(await Promise.all(queued), ['Q0', 'Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6', 'Q7', 'Q8', 'Q9', 'Q10']);
    t.equal(batcher.expectedWaitMs('pack'), 0, 'drained: idle again');
    t.equal(batcher.expectedWaitMs('other'), 0, 'another key is idle');
  },
);

t.test('the batcher forgets a key once its queue drains: a later request starts at once', async (t) => {
  const { calls, batcher } = recorder(2);
  const a = batcher.submit('pack', 'a');
  const b = batcher.submit('pack', 'b');
  echo(callAt(calls, 0));
  await settle();
  echo(callAt(calls, 1));
  t.same(await Promise.all([a, b]), ['A', 'B']);
  await settle();
  t.equal(batcher.expectedWaitMs('pack'), 0);

  const again = batcher.submit('pack', 'c');
  t.equal(calls.length, 3, 'started within submit, as at a key never seen');
  t.same(callAt(calls, 2).items, ['c']);
  t.ok(batcher.expectedWaitMs('pack') > 0, 'running again: a request now would wait for it');
  echo(callAt(calls, 2));
  t.equal(await again, 'C');
});

t.test('a batch running longer than the average counts for how long it has run', async (t) => {
  const { calls, batcher } = recorder(2);
  const first = batcher.submit('pack', 'a');
  echo(callAt(calls, 0));
  await first;
  const stuck = batcher.submit('pack', 'b');
  await sleep(80);
  const wait = batcher.expectedWaitMs('pack');
  t.ok(
    wait >= 75,
    `a batch stuck for 80 ms: the estimate is at least that (${wait.toFixed(1)} ms), whatever the average`,
  );
  echo(callAt(calls, 1));
  await stuck;
});

t.test(
  'past maxWaitMs, the batch whose turn has come is served; the late requests left behind it are refused with 503 overloaded, unrun',
  async (t) => {
    const calls: Call[] = [];
    const batcher = new KeyedBatcher<string, string>(
      (key, items) => new Promise((answer, fail) => calls.push({ key, items: [...items], answer, fail })),
      2,
      {
        maxWaitMs: 50,
      },
    );
    const head = batcher.submit('pack', 'head');
    const late = ['a', 'b', 'c'].map((item) => batcher.submit('pack', item).catch((error: unknown) => error));
    await sleep(70);
    const fresh = batcher.submit('pack', 'fresh');
    echo(callAt(calls, 0));
    t.equal(await head, 'HEAD');
    await settle();
    t.same(
      callAt(calls, 1).items,
      ['a', 'b'],
      'the next batch is served though it waited past the limit (the batch before it stalled)',
    );
    const refused = (await late[2]) as { statusCode?: number; code?: string };
    t.same(
      [refused.statusCode, refused.code],
      [503, 'overloaded'],
      'waited past the limit and left behind a full batch: refused',
    );
    echo(callAt(calls, 1));
    t.same(await Promise.all(late.slice(0, 2)), ['A', 'B']);
    await settle();
    t.same(callAt(calls, 2).items, ['fresh'], 'the batch after holds only the request still in time');
    echo(callAt(calls, 2));
    t.equal(await fresh, 'FRESH');
    t.equal(calls.length, 3, 'the refused request never ran');
  },
);

t.test('a batch that fails as a whole is reported before its requests are run again alone, or rejected', async (t) => {
  const faults: { key: string; size: number; rerunAlone: boolean }[] = [];
  const calls: Call[] = [];
  const batcher = new KeyedBatcher<string, string>(
    (key, items) => new Promise((answer, fail) => calls.push({ key, items: [...items], answer, fail })),
    10,
    {
      onFault: ({ key, size, rerunAlone }) => faults.push({ key, size, rerunAlone }),
    },
  );
  const head = batcher.submit('pack', 'head');
  const pair = [batcher.submit('pack', 'x'), batcher.submit('pack', 'y')];
  echo(callAt(calls, 0));
  await head;
  await settle();
  callAt(calls, 1).fail(new Error('a bug that shows with two items'));
  await settle();
  echo(callAt(calls, 2));
  await settle();
  echo(callAt(calls, 3));
  t.same(await Promise.all(pair), ['X', 'Y']);
  const shed = batcher.submit('other', 'z').catch((error: unknown) => error);
  callAt(calls, 4).fail(overloadedError(1));
  await shed;
  t.same(faults, [
    { key: 'pack', size: 2, rerunAlone: true },
    { key: 'other', size: 1, rerunAlone: false },
  ]);
});
