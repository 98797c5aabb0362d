import { sql } from 'drizzle-orm';
import type { PackStatus, PurchaseStatus } from '../../../schemas/enums.js';
import type { Database } from '../database/index.js';
import { jsonb, rowsOf, textArray } from '../rows.js';
import { databaseNow, dueForReclaim } from './reservations-repository.js';

/**
 * SQL of purchases and owned packs. Writes run inside the caller's transaction.
 *
 * A pack keeps the count of its pending purchases (`packs.reserved`), changed in the statement
 * that reserves, completes, cancels or expires one, so a start's cost does not grow with the
 * reservations live. A pending purchase past its expiry holds nothing: it stays counted until a
 * start or the expiry job reclaims it (marks it expired and takes it off the count), under the
 * pack's row lock, in expiry order; until then the count is an upper bound of the live ones,
 * which a start that would be refused for it makes exact by reclaiming first.
 *
 * Locks are taken pack first, then purchases (starts, the expiry job), or purchases first with the
 * pack's row last (completes, cancels), and reclaiming skips purchase rows another transaction
 * holds: no two of them wait for each other the wrong way round.
 */

/** A pack's sales under its row lock: what a start needs to decide. */
export interface LockedSales {
  status: PackStatus;
  price: number;
  cardsPerPack: number;
  supply: number | null;
  maxPerUser: number | null;
  sold: number;
  opened: number;
  /** The kept count (see above). */
  reserved: number;
  /** Reward packs granted and promised (plugins/app/rewards). */
  granted: number;
  promised: number;
  /** Copies left in the pool. */
  remaining: number;
}

/**
 * Takes the pack's row lock for the rest of the transaction and reads its sales; undefined for an
 * unknown pack. Two statements: the pool is counted after the lock is held, by a statement that
 * sees what every earlier holder committed. Counted in the locking statement, a start that waited
 * for an open would see the open's count of packs opened but the pool as it was before the open
 * took its copies, and sell packs nobody can fill.
 */
export async function lockSales(tx: Database, packId: string): Promise<LockedSales | undefined> {
  const [row] = rowsOf<{
    status: PackStatus;
    price: number;
    cards_per_pack: number;
    supply: number | null;
    max_per_user: number | null;
    sold: number;
    opened: number;
    reserved: number;
    granted: number;
    promised: number;
  }>(
    // `no key update`: a pack's row is referenced by the purchases and owned packs inserted while
    // it is held, whose key share locks must not wait for it (see packs/repository.ts findPack).
    await tx.execute(sql`
      select status, price, cards_per_pack, supply, max_per_user, sold, opened, reserved, granted, promised
      from packs where id = ${packId} for no key update`),
  );
  if (!row) return undefined;
  const [pool] = rowsOf<{ remaining: string }>(
    await tx.execute(
      sql`select coalesce(sum(remaining), 0) as remaining from pack_pool_entries where pack_id = ${packId}`,
    ),
  );
  return {
    status: row.status,
    price: row.price,
    cardsPerPack: row.cards_per_pack,
    supply: row.supply,
    maxPerUser: row.max_per_user,
    sold: row.sold,
    opened: row.opened,
    reserved: row.reserved,
    granted: row.granted,
    promised: row.promised,
    remaining: Number(pool?.remaining ?? 0),
  };
}

/** Each user's purchases of the pack that count against maxPerUser: completed ones and live reservations. */
export async function heldByUsers(
  tx: Database,
  packId: string,
  userIds: readonly string[],
): Promise<Map<string, number>> {
  const rows = rowsOf<{ user_id: string; held: number }>(
    await tx.execute(sql`
      select user_id, count(*)::int as held from purchases
      where user_id = any(${textArray(userIds)}) and pack_id = ${packId}
        and (status = 'completed' or (status = 'pending' and expires_at > ${databaseNow}))
      group by user_id`),
  );
  return new Map(rows.map((row) => [row.user_id, row.held]));
}

export interface NewReservation {
  id: string;
  userId: string;
  serverSeed: string;
  serverSeedHash: string;
}

/**
 * Inserts the reservations, starting now by the database's clock and expiring `ttlMs` later,
 * counts them on the pack, and on the way reclaims up to `reclaimLimit` reservations that expired
 * since the last start: one statement. Answers when they start and expire (the same for all).
 * The caller holds the pack's row lock.
 */
export async function writeReservations(
  tx: Database,
  write: {
    packId: string;
    price: number;
    ttlMs: number;
    reservations: readonly NewReservation[];
    reclaimLimit: number;
  },
): Promise<{ createdAt: Date; expiresAt: Date }> {
  const rows = write.reservations.map((r) => ({
    id: r.id,
    user_id: r.userId,
    server_seed: r.serverSeed,
    server_seed_hash: r.serverSeedHash,
  }));
  const [row] = rowsOf<{ inserted: number; counted: number; created_at: string; expires_at: string }>(
    await tx.execute(sql`
      with reclaimed as (
        update purchases p set status = 'expired', ended_at = ${databaseNow} where p.id in (${dueForReclaim(write.packId, write.reclaimLimit)}) returning 1),
      inserted as (
        insert into purchases (id, user_id, pack_id, status, price, server_seed, server_seed_hash, created_at, expires_at)
        select r.id, r.user_id, ${write.packId}, 'pending', ${write.price}, r.server_seed, r.server_seed_hash,
               statement_timestamp(), statement_timestamp() + ${write.ttlMs} * interval '1 millisecond'
        from jsonb_to_recordset(${jsonb(rows)}) as r(id text, user_id text, server_seed text, server_seed_hash text)
        returning 1),
      counted as (
        update packs set reserved = reserved + (select count(*) from inserted) - (select count(*) from reclaimed) where id = ${write.packId} returning 1)
      select (select count(*) from inserted)::int as inserted, (select count(*) from counted)::int as counted,
             statement_timestamp() as created_at, statement_timestamp() + ${write.ttlMs} * interval '1 millisecond' as expires_at`),
  );
  if (row?.inserted !== rows.length || row.counted !== 1)
    throw new Error(`reserving ${rows.length} packs of ${write.packId} wrote ${JSON.stringify(row)}`);
  return { createdAt: new Date(row.created_at), expiresAt: new Date(row.expires_at) };
}

/** A purchase row with what a complete or a cancel needs beside it. */
export interface LockedPurchase {
  id: string;
  userId: string;
  packId: string;
  status: PurchaseStatus;
  price: number;
  serverSeedHash: string;
  clientSeed: string | null;
  expiresAt: Date;
  createdAt: Date;
  completedAt: Date | null;
  /** Pending and not past its expiry by the database's clock, when it was locked. */
  live: boolean;
  packStatus: PackStatus;
  /** The owned pack of a completed purchase. */
  userPack: { id: string; createdAt: Date; openedAt: Date | null } | null;
}

/**
 * The purchases, locked for the rest of the transaction in id order (so concurrent batches lock
 * them the same way round), each with its pack's status and its owned pack; in one statement.
 */
export async function lockPurchases(tx: Database, ids: readonly string[]): Promise<Map<string, LockedPurchase>> {
  const rows = rowsOf<{
    id: string;
    user_id: string;
    pack_id: string;
    status: PurchaseStatus;
    price: number;
    server_seed_hash: string;
    client_seed: string | null;
    expires_at: string;
    created_at: string;
    completed_at: string | null;
    live: boolean;
    pack_status: PackStatus;
    user_pack_id: string | null;
    user_pack_created_at: string | null;
    user_pack_opened_at: string | null;
  }>(
    await tx.execute(sql`
      select p.id, p.user_id, p.pack_id, p.status, p.price, p.server_seed_hash, p.client_seed, p.expires_at, p.created_at, p.completed_at,
             p.status = 'pending' and p.expires_at > ${databaseNow} as live, k.status as pack_status,
             u.id as user_pack_id, u.created_at as user_pack_created_at, u.opened_at as user_pack_opened_at
      from purchases p join packs k on k.id = p.pack_id left join user_packs u on u.purchase_id = p.id
      where p.id = any(${textArray(ids)}) order by p.id collate "C" for update of p`),
  );
  const date = (value: string | null) => (value === null ? null : new Date(value));
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        userId: row.user_id,
        packId: row.pack_id,
        status: row.status,
        price: row.price,
        serverSeedHash: row.server_seed_hash,
        clientSeed: row.client_seed,
        expiresAt: new Date(row.expires_at),
        createdAt: new Date(row.created_at),
        completedAt: date(row.completed_at),
        live: row.live,
        packStatus: row.pack_status,
        userPack:
          row.user_pack_id === null
            ? null
            : {
                id: row.user_pack_id,
                createdAt: new Date(row.user_pack_created_at as string),
                openedAt: date(row.user_pack_opened_at),
              },
      },
    ]),
  );
}

/**
 * The owned packs of completed purchases, by purchase, read afresh: a purchase locked after
 * waiting for another transaction's complete shows that complete's status, but not its owned pack
 * (the lock's statement reads other tables as they were when it began).
 */
export async function ownedPacksOf(
  tx: Database,
  purchaseIds: readonly string[],
): Promise<Map<string, NonNullable<LockedPurchase['userPack']>>> {
  const rows = rowsOf<{ purchase_id: string; id: string; created_at: string; opened_at: string | null }>(
    await tx.execute(
      sql`select purchase_id, id, created_at, opened_at from user_packs where purchase_id = any(${textArray(purchaseIds)})`,
    ),
  );
  return new Map(
    rows.map((row) => [
      row.purchase_id,
      {
        id: row.id,
        createdAt: new Date(row.created_at),
        openedAt: row.opened_at === null ? null : new Date(row.opened_at),
      },
    ]),
  );
}

export interface Completion {
  purchaseId: string;
  userId: string;
  clientSeed: string | null;
  userPackId: string;
}

/**
 * Completes the purchases (each becomes an owned, unopened pack), marks the lapsed ones expired,
 * and moves the pack's counts (sold, reserved) with them: one statement, whose update of the pack
 * takes its row lock last, for the shortest hold. Answers the pack's team, or undefined, writing
 * nothing the caller may keep, when completions were asked and the pack is no longer active (the
 * caller must roll back). The caller holds the purchases' row locks.
 */
export async function writeCompletions(
  tx: Database,
  write: { packId: string; at: Date; completions: readonly Completion[]; lapsed: readonly string[] },
): Promise<{ teamId: string | null } | undefined> {
  const completions = write.completions.map((c) => ({
    purchase_id: c.purchaseId,
    user_id: c.userId,
    client_seed: c.clientSeed,
    user_pack_id: c.userPackId,
  }));
  const [row] = rowsOf<{ completed: number; owned: number; counted: number; team_id: string | null }>(
    await tx.execute(sql`
      with completing as (select * from jsonb_to_recordset(${jsonb(completions)}) as c(purchase_id text, user_id text, client_seed text, user_pack_id text)),
      completed as (
        update purchases p set status = 'completed', completed_at = ${write.at}, client_seed = c.client_seed
        from completing c where p.id = c.purchase_id returning 1),
      owned as (
        insert into user_packs (id, user_id, pack_id, purchase_id, created_at)
        select c.user_pack_id, c.user_id, ${write.packId}, c.purchase_id, ${write.at} from completing c returning 1),
      lapsed as (
        update purchases set status = 'expired', ended_at = ${databaseNow} where id = any(${textArray(write.lapsed)}) and status = 'pending' returning 1),
      counted as (
        update packs set sold = sold + (select count(*) from completed), reserved = reserved - (select count(*) from completed) - (select count(*) from lapsed)
        where id = ${write.packId} and (status = 'active' or not exists (select 1 from completed)) returning team_id)
      select (select count(*) from completed)::int as completed, (select count(*) from owned)::int as owned, (select count(*) from counted)::int as counted,
        (select team_id from counted) as team_id`),
  );
  if (row?.completed !== completions.length || row.owned !== completions.length) {
    throw new Error(`completing ${completions.length} purchases of ${write.packId} wrote ${JSON.stringify(row)}`);
  }
  return row.counted === 1 ? { teamId: row.team_id } : undefined;
}

/** Cancels a pending purchase and takes it off its pack's count, in one statement. The caller holds the purchase's row lock. */
export async function writeCancellation(
  tx: Database,
  purchase: { id: string; packId: string },
  at: Date,
): Promise<void> {
  await tx.execute(sql`
    with cancelled as (update purchases set status = 'cancelled', ended_at = ${at} where id = ${purchase.id} and status = 'pending' returning 1)
    update packs set reserved = reserved - (select count(*) from cancelled) where id = ${purchase.packId}`);
}
