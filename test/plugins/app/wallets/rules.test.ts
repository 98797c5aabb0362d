import t from 'tap';
import { MAX_BALANCE, planEntry } from '../../../../plugins/app/wallets/rules.js';

const now = new Date('2026-11-23T10:00:00.000Z');
const empty = { balance: 0, lastSeq: null, updatedAt: new Date(0) };

t.test('the first entry starts the chain at 1 from a zero balance', async (t) => {
  t.same(planEntry(empty, 500, now), {
    seq: 1,
    previousSeq: null,
    previousBalance: 0,
    balanceAfter: 500,
    createdAt: now,
  });
});

t.test('each entry follows the last one', async (t) => {
  const wallet = { balance: 500, lastSeq: 1, updatedAt: new Date(now.getTime() - 1000) };
  t.same(planEntry(wallet, -200, now), {
    seq: 2,
    previousSeq: 1,
    previousBalance: 500,
    balanceAfter: 300,
    createdAt: now,
  });
  t.same(planEntry(wallet, -500, now).balanceAfter, 0, 'down to exactly zero');
});

t.test('a balance never goes below zero nor past an integer', async (t) => {
  t.throws(() => planEntry(empty, -1, now), { code: 'insufficient_funds', statusCode: 409 });
  t.throws(() => planEntry({ balance: 10, lastSeq: 3, updatedAt: now }, -11, now), { code: 'insufficient_funds' });
  t.throws(() => planEntry({ balance: MAX_BALANCE, lastSeq: 3, updatedAt: now }, 1, now), {
    code: 'balance_limit',
    statusCode: 409,
  });
  t.throws(() => planEntry(empty, 0, now), RangeError, 'zero is no change');
  t.throws(() => planEntry(empty, 1.5, now), RangeError, 'coins are integers');
});

t.test("entries of a wallet get increasing times even when this clock is behind the last writer's", async (t) => {
  const ahead = new Date(now.getTime() + 5000);
  t.same(planEntry({ balance: 1, lastSeq: 1, updatedAt: ahead }, 1, now).createdAt, new Date(ahead.getTime() + 1));
  t.same(
    planEntry({ balance: 1, lastSeq: 1, updatedAt: now }, 1, now).createdAt,
    new Date(now.getTime() + 1),
    'the same millisecond',
  );
});
