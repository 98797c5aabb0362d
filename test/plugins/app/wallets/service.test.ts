import t from 'tap';
import { MAX_BALANCE } from '../../../../plugins/app/wallets/rules.js';
import { buildTestApp } from '../../../support/app.js';
import { economyViolations, signIn } from '../../../support/economy.js';

/**
 * What other domains call in their own transactions: credit and debit (a positive amount, one
 * ledger entry each, never below zero nor past the largest balance) and the balance, locked or not.
 */

t.test('credit, debit and balance in the caller transaction', async (t) => {
  const app = await buildTestApp(t);
  const { wallets } = app;
  const fan = 'wallet-service-fan';
  await signIn(app, fan);

  t.equal(await wallets.balance(app.db.orm, fan), 0, 'no wallet: 0');
  const credited = await app.db.transaction((tx) =>
    wallets.credit(tx, { userId: fan, amount: 300, kind: 'reward', reference: 'quest-1' }),
  );
  t.has(credited, { amount: 300, balanceAfter: 300, kind: 'reward', reference: 'quest-1', reason: null });
  const debited = await app.db.transaction((tx) =>
    wallets.debit(tx, { userId: fan, amount: 120, kind: 'adjustment', reason: 'taken back' }),
  );
  t.has(
    debited,
    { amount: -120, balanceAfter: 180, kind: 'adjustment', reason: 'taken back' },
    'a debit is a negative entry',
  );
  t.equal(await app.db.transaction((tx) => wallets.balance(tx, fan, { lock: true })), 180, 'locked read');

  const refused = await app.db
    .transaction((tx) => wallets.debit(tx, { userId: fan, amount: 181, kind: 'adjustment', reason: 'x' }))
    .catch((error: unknown) => error);
  t.has(refused, { statusCode: 409, code: 'insufficient_funds' }, 'never below zero');
  const full = await app.db
    .transaction((tx) => wallets.credit(tx, { userId: fan, amount: MAX_BALANCE, kind: 'reward', reference: 'x' }))
    .catch((error: unknown) => error);
  t.has(full, { statusCode: 409, code: 'balance_limit' }, 'never past the largest balance');
  for (const amount of [0, -5, 1.5]) {
    for (const move of ['credit', 'debit'] as const) {
      await t.rejects(
        app.db.transaction((tx) => wallets[move](tx, { userId: fan, amount, kind: 'adjustment', reason: 'x' })),
        RangeError,
        `${move} of ${amount}: the amount is a positive integer`,
      );
    }
  }
  t.equal(await wallets.balance(app.db.orm, fan), 180, 'refusals wrote nothing');
  t.same(await economyViolations(app), [], 'every balance equals its ledger');
});
