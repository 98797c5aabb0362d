import type { LedgerRow } from '../../../db/schema.js';
import type { AppError } from '../errors.js';
import type { LedgerEntry, LedgerQuery, Wallet, WalletAdjustmentBody } from '../../../schemas/wallets.js';
import type { Database, DatabaseHandle } from '../db.js';
import { decodeCursor } from '../pagination.js';
import { userNotFound } from '../users/errors.js';
import { userExists } from '../users/repository.js';
import { appendLedgerEntries, appendLedgerEntry, balanceOf, type LedgerChange, listLedger } from './repository.js';

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

export function createWalletsService(db: DatabaseHandle) {
  return {
    async wallet(userId: string): Promise<Wallet> {
      return { balance: await balanceOf(db.orm, userId), currency: 'coins' };
    },

    async transactions(userId: string, query: LedgerQuery) {
      const page = await listLedger(db.orm, userId, { limit: query.limit ?? 50, after: decodeCursor(query.cursor) });
      return { items: page.items.map(toLedgerEntry), nextCursor: page.nextCursor };
    },

    /**
     * Changes of several wallets in the caller's transaction, in order: for each, its ledger
     * entry, or the error it is refused with (insufficient_funds ...), which leaves the others be.
     */
    applyChanges(tx: Database, changes: readonly LedgerChange[], now: Date): Promise<(LedgerRow | AppError)[]> {
      return appendLedgerEntries(tx, changes, now);
    },

    /** A platform admin's credit or debit (the route admits platform admins only). */
    async adjust(tx: Database, actorId: string, userId: string, body: WalletAdjustmentBody): Promise<LedgerEntry> {
      if (!(await userExists(tx, userId))) throw userNotFound();
      const entry = await appendLedgerEntry(
        tx,
        { userId, amount: body.amount, kind: 'adjustment', reason: body.reason.trim(), actorId },
        new Date(),
      );
      return toLedgerEntry(entry);
    },
  };
}

export type WalletsService = ReturnType<typeof createWalletsService>;
