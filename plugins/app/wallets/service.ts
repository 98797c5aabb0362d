import type { LedgerRow } from '../../../db/schema.js';
import type { LedgerEntry, LedgerQuery, Wallet, WalletAdjustmentBody } from '../../../schemas/wallets.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { AppError } from '../errors.js';
import type { EventsService } from '../events/service.js';
import type { NewEvent } from '../../../schemas/events.js';
import { pageOf } from '../pagination.js';
import type { UsersService } from '../users/service.js';
import {
  appendLedgerEntries,
  appendLedgerEntry,
  balanceOf,
  type LedgerChange,
  listLedger,
  lockedBalance,
} from './repository.js';

/** A credit or a debit another domain makes: `amount` is the positive number of coins moved. */
export type WalletMove = LedgerChange;

export function toLedgerEntry(row: LedgerRow): LedgerEntry {
  return {
    id: row.id,
    amount: row.amount,
    balanceAfter: row.balanceAfter,
    kind: row.kind,
    reference: row.reference,
    reason: row.reason,
    createdAt: row.createdAt.toISOString(),
  };
}

/** A credit or debit is a positive whole number of coins; its sign is the method's. */
function positive(amount: number): number {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new RangeError('a credit or debit is a positive integer');
  return amount;
}

/** The `wallet.credited` or `wallet.debited` event of a ledger entry. */
function ledgerEvent(row: LedgerRow): NewEvent {
  const data = {
    entryId: row.id,
    amount: Math.abs(row.amount),
    balanceAfter: row.balanceAfter,
    kind: row.kind,
    reference: row.reference,
  };
  return row.amount > 0
    ? { type: 'wallet.credited', userId: row.userId, subject: row.id, data }
    : { type: 'wallet.debited', userId: row.userId, subject: row.id, data };
}

export function createWalletsService(
  db: DatabaseHandle,
  users: Pick<UsersService, 'ensureExists'>,
  events: Pick<EventsService, 'append'>,
) {
  /** Every ledger entry is told to the event log in its own transaction. */
  async function append(tx: Database, change: LedgerChange, now: Date): Promise<LedgerRow> {
    const row = await appendLedgerEntry(tx, change, now);
    await events.append(tx, ledgerEvent(row));
    return row;
  }

  return {
    async wallet(userId: string): Promise<Wallet> {
      return { balance: await balanceOf(db.orm, userId), currency: 'coins' };
    },

    async transactions(userId: string, query: LedgerQuery) {
      const page = await listLedger(db.orm, userId, pageOf(query));
      return { items: page.items.map(toLedgerEntry), nextCursor: page.nextCursor };
    },

    /**
     * A user's balance (0 without a wallet), read in `tx`; with `lock`, the wallet's row is held
     * until the transaction ends, so a decision made on the balance still holds when it is written.
     */
    balance(tx: Database, userId: string, options: { lock?: boolean } = {}): Promise<number> {
      return options.lock ? lockedBalance(tx, userId) : balanceOf(tx, userId);
    },

    /**
     * Adds `amount` coins in the caller's transaction: one ledger entry. Throws balance_limit, and
     * writes nothing, past the largest balance.
     */
    async credit(tx: Database, move: WalletMove, now = new Date()): Promise<LedgerEntry> {
      return toLedgerEntry(await append(tx, { ...move, amount: positive(move.amount) }, now));
    },

    /**
     * Takes `amount` coins in the caller's transaction: one ledger entry of `-amount`. Throws
     * insufficient_funds, and writes nothing, when the balance would go below zero.
     */
    async debit(tx: Database, move: WalletMove, now = new Date()): Promise<LedgerEntry> {
      return toLedgerEntry(await append(tx, { ...move, amount: -positive(move.amount) }, now));
    },

    /**
     * Changes of several wallets in the caller's transaction, in order: for each, its ledger
     * entry, or the error it is refused with (insufficient_funds ...), which leaves the others be.
     */
    async applyChanges(tx: Database, changes: readonly LedgerChange[], now: Date): Promise<(LedgerRow | AppError)[]> {
      const outcomes = await appendLedgerEntries(tx, changes, now);
      await events.append(
        tx,
        ...outcomes.flatMap((outcome) => (outcome instanceof AppError ? [] : [ledgerEvent(outcome)])),
      );
      return outcomes;
    },

    /** A platform admin's credit or debit (the route admits platform admins only). */
    async adjust(tx: Database, actorId: string, userId: string, body: WalletAdjustmentBody): Promise<LedgerEntry> {
      await users.ensureExists(tx, userId);
      const entry = await append(
        tx,
        { userId, amount: body.amount, kind: 'adjustment', reason: body.reason, actorId },
        new Date(),
      );
      return toLedgerEntry(entry);
    },
  };
}

export type WalletsService = ReturnType<typeof createWalletsService>;
