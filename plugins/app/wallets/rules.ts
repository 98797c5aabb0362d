import { ConflictError } from '../errors.js';

/**
 * The rules of a wallet: integer coins, never below zero, never past what a PostgreSQL integer
 * holds; every change is one ledger entry following the last one.
 */

/** The largest balance a wallet may hold (PostgreSQL `integer`). */
export const MAX_BALANCE = 2_147_483_647;

export interface WalletState {
  balance: number;
  /** The number of the wallet's last ledger entry; null before the first. */
  lastSeq: number | null;
  /** The time of the last entry. */
  updatedAt: Date;
}

export interface PlannedEntry {
  seq: number;
  previousSeq: number | null;
  previousBalance: number;
  balanceAfter: number;
  createdAt: Date;
}

export const insufficientFunds = (balance: number, amount: number) =>
  new ConflictError('insufficient_funds', `The wallet holds ${balance} coins; this needs ${-amount}.`, [
    { path: '/amount', message: `the balance is ${balance}` },
  ]);

/**
 * The ledger entry that changes the wallet by `amount`. Its time is `now`, or 1 ms after the last
 * entry when clocks disagree, so a wallet's entries are ordered by time as they are by number.
 */
export function planEntry(wallet: WalletState, amount: number, now: Date): PlannedEntry {
  if (!Number.isSafeInteger(amount) || amount === 0) throw new RangeError('a ledger amount is a non-zero integer');
  const balanceAfter = wallet.balance + amount;
  if (balanceAfter < 0) throw insufficientFunds(wallet.balance, amount);
  if (balanceAfter > MAX_BALANCE) {
    throw new ConflictError(
      'balance_limit',
      `A wallet holds at most ${MAX_BALANCE} coins; this would make ${balanceAfter}.`,
      [{ path: '/amount', message: `the balance is ${wallet.balance}` }],
    );
  }
  const seq = (wallet.lastSeq ?? 0) + 1;
  const createdAt = wallet.lastSeq === null || now > wallet.updatedAt ? now : new Date(wallet.updatedAt.getTime() + 1);
  return { seq, previousSeq: wallet.lastSeq, previousBalance: wallet.balance, balanceAfter, createdAt };
}
