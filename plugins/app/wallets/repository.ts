import { randomUUID } from 'node:crypto';
import { and, desc, eq } from 'drizzle-orm';
import { type LedgerRow, walletLedger, wallets } from '../../../db/schema.js';
import type { LedgerKind } from '../../../schemas/enums.js';
import type { Database } from '../db.js';
import { afterCursor, type CursorKey, toPage } from '../pagination.js';
import { planEntry } from './rules.js';

/** SQL of wallets and their ledger. Writes run inside the caller's transaction. */

/** The balance, with the wallet's row held until the transaction ends (0 without a wallet). */
export async function lockedBalance(tx: Database, userId: string): Promise<number> {
  const [row] = await tx.select({ balance: wallets.balance }).from(wallets).where(eq(wallets.userId, userId)).for('update');
  return row?.balance ?? 0;
}

export async function balanceOf(db: Database, userId: string): Promise<number> {
  const [row] = await db.select({ balance: wallets.balance }).from(wallets).where(eq(wallets.userId, userId));
  return row?.balance ?? 0;
}

export interface LedgerChange {
  userId: string;
  amount: number;
  kind: LedgerKind;
  reference?: string | null;
  reason?: string | null;
  actorId?: string | null;
}

/**
 * Appends one entry to the user's ledger and moves the balance with it, holding the wallet's row
 * lock until the transaction ends (so concurrent changes of one wallet apply one after another).
 * Throws insufficient_funds, and writes nothing, when the balance would go below zero.
 */
export async function appendLedgerEntry(tx: Database, change: LedgerChange, now: Date): Promise<LedgerRow> {
  const lockWallet = () => tx.select().from(wallets).where(eq(wallets.userId, change.userId)).for('update');
  let [wallet] = await lockWallet();
  if (!wallet) {
    await tx.insert(wallets).values({ userId: change.userId, balance: 0, lastSeq: null, updatedAt: now }).onConflictDoNothing();
    [wallet] = await lockWallet();
  }
  if (!wallet) throw new Error(`the wallet of ${change.userId} vanished inside its transaction`);
  const planned = planEntry(wallet, change.amount, now);
  const [entry] = await tx
    .insert(walletLedger)
    .values({
      id: randomUUID(),
      userId: change.userId,
      seq: planned.seq,
      previousSeq: planned.previousSeq,
      previousBalance: planned.previousBalance,
      amount: change.amount,
      balanceAfter: planned.balanceAfter,
      kind: change.kind,
      reference: change.reference ?? null,
      reason: change.reason ?? null,
      actorId: change.actorId ?? null,
      createdAt: planned.createdAt,
    })
    .returning();
  await tx
    .update(wallets)
    .set({ balance: planned.balanceAfter, lastSeq: planned.seq, updatedAt: planned.createdAt })
    .where(eq(wallets.userId, change.userId));
  return entry as LedgerRow;
}

/** A user's ledger, newest first. */
export async function listLedger(db: Database, userId: string, page: { limit: number; after?: CursorKey }) {
  const rows = await db
    .select()
    .from(walletLedger)
    .where(and(eq(walletLedger.userId, userId), afterCursor(walletLedger.createdAt, walletLedger.id, page.after)))
    .orderBy(desc(walletLedger.createdAt), desc(walletLedger.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}
