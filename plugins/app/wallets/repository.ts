import { randomUUID } from 'node:crypto';
import { and, desc, eq, sql } from 'drizzle-orm';
import { type LedgerRow, walletLedger, wallets } from '../../../db/schema.js';
import type { LedgerKind } from '../../../schemas/enums.js';
import type { Database } from '../database/index.js';
import { afterCursor, type CursorKey, toPage } from '../pagination.js';
import { AppError } from '../errors.js';
import { planEntry, type WalletState } from './rules.js';
import { jsonb, rowsOf, textArray } from '../rows.js';

/** SQL of wallets and their ledger. Writes run inside the caller's transaction. */

/** The balance, with the wallet's row held until the transaction ends (0 without a wallet). */
export async function lockedBalance(tx: Database, userId: string): Promise<number> {
  const [row] = await tx
    .select({ balance: wallets.balance })
    .from(wallets)
    .where(eq(wallets.userId, userId))
    .for('update');
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

/** The wallets of `userIds` that exist, locked until the transaction ends, in one order (so two batches never wait for each other the wrong way round). */
async function lockWallets(tx: Database, userIds: readonly string[]): Promise<Map<string, WalletState>> {
  const rows = rowsOf<{ user_id: string; balance: number; last_seq: number | null; updated_at: string | Date }>(
    await tx.execute(
      sql`select user_id, balance, last_seq, updated_at from wallets where user_id = any(${textArray(userIds)}) order by user_id collate "C" for update`,
    ),
  );
  return new Map(
    rows.map((row) => [
      row.user_id,
      { balance: row.balance, lastSeq: row.last_seq, updatedAt: new Date(row.updated_at) },
    ]),
  );
}

/**
 * The entries `changes` make from the wallets' states, in order (a user without a wallet has a
 * balance of 0), and the states they leave in `states`; a change that cannot be made is its
 * AppError instead. Pure but for updating `states` with each entry.
 */
function planEntries(wallets: ReadonlyMap<string, WalletState>, changes: readonly LedgerChange[], now: Date) {
  const states = new Map(wallets);
  const outcomes: (LedgerRow | AppError)[] = [];
  const entries: LedgerRow[] = [];
  for (const change of changes) {
    const wallet = states.get(change.userId) ?? { balance: 0, lastSeq: null, updatedAt: now };
    let planned: ReturnType<typeof planEntry>;
    try {
      planned = planEntry(wallet, change.amount, now);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      outcomes.push(error);
      continue;
    }
    const entry: LedgerRow = {
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
    };
    states.set(change.userId, { balance: planned.balanceAfter, lastSeq: planned.seq, updatedAt: planned.createdAt });
    entries.push(entry);
    outcomes.push(entry);
  }
  return { outcomes, entries, states };
}

/**
 * Appends entries to the users' ledgers and moves their balances with them, in order, holding
 * the wallets' row locks until the transaction ends (so concurrent changes of one wallet apply
 * one after another). Answers, for each change, its entry, or the AppError it is refused with
 * (insufficient_funds when the balance would go below zero, balance_limit past the largest):
 * a refused change writes nothing and does not stop the others. Two statements whatever the
 * number of changes: the locks, then every write.
 */
export async function appendLedgerEntries(
  tx: Database,
  changes: readonly LedgerChange[],
  now: Date,
): Promise<(LedgerRow | AppError)[]> {
  if (changes.length === 0) return [];
  const userIds = [...new Set(changes.map((change) => change.userId))];
  const states = await lockWallets(tx, userIds);
  // A change that would be written opens its user's wallet; one refused (a debit from no wallet,
  // a credit past the limit) leaves none behind.
  const opening = [...new Set(planEntries(states, changes, now).entries.map((entry) => entry.userId))].filter(
    (userId) => !states.has(userId),
  );
  if (opening.length > 0) {
    await tx.execute(
      sql`insert into wallets (user_id, balance, last_seq, updated_at) select u, 0, null, ${now} from unnest(${textArray(opening)}) as u on conflict do nothing`,
    );
    for (const [userId, state] of await lockWallets(tx, opening)) states.set(userId, state);
  }
  const planned = planEntries(states, changes, now);
  const { outcomes, entries } = planned;
  if (entries.length === 0) return outcomes;
  const moved = [...new Set(entries.map((entry) => entry.userId))].map((userId) => {
    const state = planned.states.get(userId) as WalletState;
    return { user_id: userId, balance: state.balance, last_seq: state.lastSeq, updated_at: state.updatedAt };
  });
  const written = entries.map((entry) => ({
    id: entry.id,
    user_id: entry.userId,
    seq: entry.seq,
    previous_seq: entry.previousSeq,
    previous_balance: entry.previousBalance,
    amount: entry.amount,
    balance_after: entry.balanceAfter,
    kind: entry.kind,
    reference: entry.reference,
    reason: entry.reason,
    actor_id: entry.actorId,
    created_at: entry.createdAt,
  }));
  // One statement: the wallets' foreign key to their last entry is checked at its end, when both are written.
  const [counts] = rowsOf<{ entries: number; wallets: number }>(
    await tx.execute(sql`
      with entries as (
        insert into wallet_ledger (id, user_id, seq, previous_seq, previous_balance, amount, balance_after, kind, reference, reason, actor_id, created_at)
        select e.id, e.user_id, e.seq, e.previous_seq, e.previous_balance, e.amount, e.balance_after, e.kind, e.reference, e.reason, e.actor_id, e.created_at
        from jsonb_to_recordset(${jsonb(written)}) as e(id text, user_id text, seq integer, previous_seq integer, previous_balance integer, amount integer,
          balance_after integer, kind text, reference text, reason text, actor_id text, created_at timestamptz)
        returning 1),
      moved as (
        update wallets w set balance = m.balance, last_seq = m.last_seq, updated_at = m.updated_at
        from jsonb_to_recordset(${jsonb(moved)}) as m(user_id text, balance integer, last_seq integer, updated_at timestamptz)
        where w.user_id = m.user_id returning 1)
      select (select count(*) from entries)::int as entries, (select count(*) from moved)::int as wallets`),
  );
  if (counts?.entries !== entries.length || counts.wallets !== moved.length) {
    throw new Error(
      `a ledger write made ${JSON.stringify(counts)}; expected ${entries.length} entries and ${moved.length} wallets`,
    );
  }
  return outcomes;
}

/**
 * Appends one entry to the user's ledger and moves the balance with it, holding the wallet's row
 * lock until the transaction ends. Throws insufficient_funds, and writes nothing, when the balance
 * would go below zero.
 */
export async function appendLedgerEntry(tx: Database, change: LedgerChange, now: Date): Promise<LedgerRow> {
  const [outcome] = await appendLedgerEntries(tx, [change], now);
  if (outcome instanceof AppError) throw outcome;
  return outcome as LedgerRow;
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
