import { asc, eq, inArray } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { type LedgerRow, walletLedger, wallets } from '../../../../db/schema.js';
import { AppError } from '../../../../plugins/app/errors.js';
import {
  appendLedgerEntries,
  appendLedgerEntry,
  type LedgerChange,
} from '../../../../plugins/app/wallets/repository.js';
import { MAX_BALANCE } from '../../../../plugins/app/wallets/rules.js';
import { buildTestApp } from '../../../support/app.js';
import { economyViolations, signIn } from '../../../support/economy.js';

/**
 * appendLedgerEntries on a real database: many wallets' changes in one call, in order, each
 * answered with its entry or its refusal, and the database's own chain of entries (foreign keys,
 * checks) accepting what it writes.
 */

const batch = (app: App, changes: LedgerChange[], now: Date) =>
  app.db.transaction((tx) => appendLedgerEntries(tx, changes, now));

const ledgerOf = (app: App, userId: string) =>
  app.db.orm.select().from(walletLedger).where(eq(walletLedger.userId, userId)).orderBy(asc(walletLedger.seq));

const walletsOf = (app: App, userIds: string[]) =>
  app.db.orm.select().from(wallets).where(inArray(wallets.userId, userIds)).orderBy(asc(wallets.userId));

/** An outcome as its entry's numbers, or the refusal's code. */
const brief = (outcome: LedgerRow | AppError) =>
  outcome instanceof AppError
    ? outcome.code
    : { userId: outcome.userId, seq: outcome.seq, amount: outcome.amount, balanceAfter: outcome.balanceAfter };

const credit = (userId: string, amount: number, reference?: string): LedgerChange => ({
  userId,
  amount,
  kind: 'reward',
  reference,
});
// An adjustment, not a purchase: a purchase debit must belong to a completed purchase, which the invariant checker verifies.
const debit = (userId: string, amount: number, reference?: string): LedgerChange => ({
  userId,
  amount: -amount,
  kind: 'adjustment',
  reference,
  reason: 'test debit',
});

t.test('appendLedgerEntries', async (t) => {
  const app = await buildTestApp(t);
  // Users exist from their first request; wallets only from their first credit.
  const users = ['ann', 'bob', 'cat', 'dan', 'eve', 'fay', 'gus', 'hal', 'ivy'].map((name) => `ledger-${name}`);
  for (const user of users) await signIn(app, user);
  const [ann, bob, cat, dan, eve, fay, gus, hal, ivy] = users as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  t.same(await walletsOf(app, users), [], 'no wallet before a credit');

  t.test('several users in one call, in order', async (t) => {
    const now = new Date('2026-11-23T10:00:00.000Z');
    const outcomes = await batch(app, [credit(ann, 100, 'r-1'), credit(bob, 50), credit(cat, 7)], now);
    t.same(outcomes.map(brief), [
      { userId: ann, seq: 1, amount: 100, balanceAfter: 100 },
      { userId: bob, seq: 1, amount: 50, balanceAfter: 50 },
      { userId: cat, seq: 1, amount: 7, balanceAfter: 7 },
    ]);
    t.has(outcomes[0], {
      kind: 'reward',
      reference: 'r-1',
      reason: null,
      actorId: null,
      previousSeq: null,
      previousBalance: 0,
      createdAt: now,
    });
    t.same(await ledgerOf(app, ann), [outcomes[0]], 'the entry answered is the entry stored');
    t.same(
      (await walletsOf(app, [ann, bob, cat])).map((wallet) => [
        wallet.userId,
        wallet.balance,
        wallet.lastSeq,
        wallet.updatedAt.toISOString(),
      ]),
      [
        [ann, 100, 1, now.toISOString()],
        [bob, 50, 1, now.toISOString()],
        [cat, 7, 1, now.toISOString()],
      ],
      'each wallet opened, at its balance and last entry',
    );
    t.same(await batch(app, [], now), [], 'no changes: nothing to do');
  });

  t.test('the same user twice in one call: a chain 1, 2, ... with balances and times following', async (t) => {
    const now = new Date('2026-11-23T11:00:00.000Z');
    const outcomes = await batch(
      app,
      [credit(dan, 30), debit(dan, 10), credit(eve, 5), debit(dan, 20), credit(dan, 1)],
      now,
    );
    t.same(outcomes.map(brief), [
      { userId: dan, seq: 1, amount: 30, balanceAfter: 30 },
      { userId: dan, seq: 2, amount: -10, balanceAfter: 20 },
      { userId: eve, seq: 1, amount: 5, balanceAfter: 5 },
      { userId: dan, seq: 3, amount: -20, balanceAfter: 0 },
      { userId: dan, seq: 4, amount: 1, balanceAfter: 1 },
    ]);
    const stored = await ledgerOf(app, dan);
    t.same(
      stored.map((entry) => [entry.seq, entry.previousSeq, entry.previousBalance, entry.balanceAfter]),
      [
        [1, null, 0, 30],
        [2, 1, 30, 20],
        [3, 2, 20, 0],
        [4, 3, 0, 1],
      ],
    );
    t.same(
      stored.map((entry) => entry.createdAt.getTime() - now.getTime()),
      [0, 1, 2, 3],
      'one `now` for the call, yet each entry of a wallet is a millisecond after the one before',
    );
    const [wallet] = await walletsOf(app, [dan]);
    t.same(
      [wallet?.balance, wallet?.lastSeq, wallet?.updatedAt.getTime()],
      [1, 4, now.getTime() + 3],
      'the wallet holds the last entry',
    );

    // A later call whose clock is behind the last entry still writes after it.
    const [next] = await batch(app, [credit(dan, 2)], new Date(now.getTime() - 60_000));
    t.has(next, { seq: 5, balanceAfter: 3, createdAt: new Date(now.getTime() + 4) });
  });

  t.test('a refused change writes nothing and leaves the others be', async (t) => {
    const now = new Date('2026-11-23T12:00:00.000Z');
    const before = (await ledgerOf(app, ann)).length;
    const outcomes = await batch(
      app,
      [debit(ann, 60), debit(bob, 51), debit(ann, 50), credit(bob, 1), debit(bob, 51)],
      now,
    );
    t.same(outcomes.map(brief), [
      { userId: ann, seq: before + 1, amount: -60, balanceAfter: 40 },
      'insufficient_funds',
      'insufficient_funds',
      { userId: bob, seq: 2, amount: 1, balanceAfter: 51 },
      { userId: bob, seq: 3, amount: -51, balanceAfter: 0 },
    ]);
    t.has(
      outcomes[1],
      { statusCode: 409, details: [{ path: '/amount', message: 'the balance is 50' }] },
      'refused at the balance it had then',
    );
    t.has(outcomes[2], { details: [{ path: '/amount', message: 'the balance is 40' }] }, "after the batch's own debit");
    t.same(
      (await ledgerOf(app, ann)).map((entry) => entry.balanceAfter),
      [100, 40],
      'no entry for the refused debit: no gap in the chain',
    );
    t.same(
      (await walletsOf(app, [ann, bob])).map((wallet) => wallet.balance),
      [40, 0],
    );
  });

  t.test('a debit from a user without a wallet is refused and opens none', async (t) => {
    const now = new Date('2026-11-23T13:00:00.000Z');
    const outcomes = await batch(app, [debit(fay, 1), credit(cat, 1)], now);
    t.same(outcomes.map(brief), ['insufficient_funds', { userId: cat, seq: 2, amount: 1, balanceAfter: 8 }]);
    t.has(outcomes[0], { details: [{ message: 'the balance is 0' }] });
    t.same(await walletsOf(app, [fay]), [], 'no wallet row');
    t.same(await ledgerOf(app, fay), []);
    t.same(await batch(app, [debit(fay, 1)], now).then((all) => all.map(brief)), ['insufficient_funds'], 'alone too');
    t.same(await walletsOf(app, [fay]), []);
  });

  t.test('a credit to a user without a wallet opens it, also when a refused debit comes first', async (t) => {
    const now = new Date('2026-11-23T14:00:00.000Z');
    const outcomes = await batch(app, [debit(gus, 5), credit(gus, 5), debit(gus, 5)], now);
    t.same(outcomes.map(brief), [
      'insufficient_funds',
      { userId: gus, seq: 1, amount: 5, balanceAfter: 5 },
      { userId: gus, seq: 2, amount: -5, balanceAfter: 0 },
    ]);
    t.same(
      (await walletsOf(app, [gus])).map((wallet) => [wallet.balance, wallet.lastSeq]),
      [[0, 2]],
    );
  });

  t.test('balance_limit: no wallet past the largest integer', async (t) => {
    const now = new Date('2026-11-23T15:00:00.000Z');
    const outcomes = await batch(
      app,
      [credit(hal, MAX_BALANCE - 1), credit(hal, 2), credit(hal, 1), credit(hal, 1), credit(eve, 1)],
      now,
    );
    t.same(outcomes.map(brief), [
      { userId: hal, seq: 1, amount: MAX_BALANCE - 1, balanceAfter: MAX_BALANCE - 1 },
      'balance_limit',
      { userId: hal, seq: 2, amount: 1, balanceAfter: MAX_BALANCE },
      'balance_limit',
      { userId: eve, seq: 2, amount: 1, balanceAfter: 6 },
    ]);
    t.has(outcomes[1], { statusCode: 409, details: [{ path: '/amount' }] });
    t.same(
      (await walletsOf(app, [hal])).map((wallet) => wallet.balance),
      [MAX_BALANCE],
    );
    const [over] = await batch(app, [debit(hal, 1), credit(hal, MAX_BALANCE)], now).then((all) => all.slice(1));
    t.equal(over && brief(over), 'balance_limit', 'a credit as large as the limit to a wallet not empty');
  });

  t.test('a credit refused (balance_limit) to a user without a wallet', async (t) => {
    const now = new Date('2026-11-23T15:30:00.000Z');
    const outcomes = await batch(app, [credit(ivy, MAX_BALANCE + 1)], now);
    t.same(outcomes.map(brief), ['balance_limit']);
    t.same(await ledgerOf(app, ivy), [], 'no entry');
    t.same(await walletsOf(app, [ivy]), [], 'a refused change writes nothing: no wallet either');
    t.same(await economyViolations(app), [], 'every invariant holds');
  });

  t.test('appendLedgerEntry (one change) throws the refusal and writes nothing', async (t) => {
    const now = new Date('2026-11-23T16:00:00.000Z');
    const entry = await app.db.transaction((tx) => appendLedgerEntry(tx, credit(bob, 3, 'single'), now));
    t.has(entry, { userId: bob, amount: 3, balanceAfter: 3, reference: 'single' });
    const refusal = await app.db
      .transaction((tx) => appendLedgerEntry(tx, debit(bob, 4), now))
      .catch((error: unknown) => error);
    t.ok(refusal instanceof AppError, 'an AppError');
    t.has(refusal, { statusCode: 409, code: 'insufficient_funds' });
    const limit = await app.db
      .transaction((tx) => appendLedgerEntry(tx, credit(hal, 2), now))
      .catch((error: unknown) => error);
    t.has(limit, { statusCode: 409, code: 'balance_limit' });
    t.same(
      (await walletsOf(app, [bob])).map((wallet) => wallet.balance),
      [3],
    );
    t.same((await ledgerOf(app, bob)).at(-1)?.reference, 'single', 'the refused debit left no entry');
  });

  t.test('the economy invariants hold afterwards: every balance equals its ledger', async (t) => {
    t.same(await economyViolations(app), []);
    const rows = await walletsOf(app, users);
    for (const wallet of rows) {
      const ledger = await ledgerOf(app, wallet.userId);
      t.equal(
        ledger.reduce((sum, entry) => sum + entry.amount, 0),
        wallet.balance,
        `${wallet.userId}: ${ledger.length} entries sum to the balance`,
      );
    }
  });
});
