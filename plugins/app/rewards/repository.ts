import { and, desc, eq, sql } from 'drizzle-orm';
import {
  type GrantRow,
  grants,
  type RewardPromiseRow,
  type RewardRow,
  rewardPromises,
  rewards,
} from '../../../db/schema.js';
import type { PackStatus } from '../../../schemas/enums.js';
import type { Database } from '../database/index.js';
import { afterCursor, type PageRequest, toPage } from '../pagination.js';
import { jsonb, rowsOf, textArray } from '../rows.js';

/** SQL of rewards, promises, grants and what grants give. Writes run inside the caller's transaction. */

export async function insertReward(tx: Database, row: typeof rewards.$inferInsert): Promise<RewardRow> {
  const [created] = await tx.insert(rewards).values(row).returning();
  return created as RewardRow;
}

export async function findReward(db: Database, id: string): Promise<RewardRow | undefined> {
  const [row] = await db.select().from(rewards).where(eq(rewards.id, id));
  return row;
}

export async function listRewards(db: Database, filters: { teamId?: string }, page: PageRequest) {
  const rows = await db
    .select()
    .from(rewards)
    .where(
      and(
        filters.teamId !== undefined ? eq(rewards.teamId, filters.teamId) : undefined,
        afterCursor(rewards.createdAt, rewards.id, page.after),
      ),
    )
    .orderBy(desc(rewards.createdAt), desc(rewards.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

/** The owning team of each pack and collectible that exists among `ids`. */
export async function catalogTeams(
  db: Database,
  ids: { packIds: readonly string[]; collectibleIds: readonly string[] },
): Promise<{ packs: Map<string, string | null>; collectibles: Map<string, string | null> }> {
  const packRows = rowsOf<{ id: string; team_id: string | null }>(
    await db.execute(sql`select id, team_id from packs where id = any(${textArray(ids.packIds)})`),
  );
  const collectibleRows = rowsOf<{ id: string; team_id: string | null }>(
    await db.execute(sql`select id, team_id from collectibles where id = any(${textArray(ids.collectibleIds)})`),
  );
  return {
    packs: new Map(packRows.map((row) => [row.id, row.team_id])),
    collectibles: new Map(collectibleRows.map((row) => [row.id, row.team_id])),
  };
}

/** A pack's counts as a promise or a grant from supply decides by them, under the pack's row lock. */
export interface PackStock {
  status: PackStatus;
  cardsPerPack: number;
  supply: number | null;
  sold: number;
  opened: number;
  reserved: number;
  granted: number;
  promised: number;
  /** Copies left in the pool. */
  remaining: number;
}

/**
 * Takes the packs' row locks for the rest of the transaction, in id order (so two rewards sharing
 * packs lock them the same way round), and reads their stock. The pool is counted by a statement
 * of its own once the locks are held, so it sees what every earlier holder (an open) committed.
 */
export async function lockPackStocks(tx: Database, packIds: readonly string[]): Promise<Map<string, PackStock>> {
  if (packIds.length === 0) return new Map();
  const locked = rowsOf<{
    id: string;
    status: PackStatus;
    cards_per_pack: number;
    supply: number | null;
    sold: number;
    opened: number;
    reserved: number;
    granted: number;
    promised: number;
  }>(
    // `no key update`: owned packs inserted while it is held reference the row (see purchases' lockSales).
    await tx.execute(sql`
      select id, status, cards_per_pack, supply, sold, opened, reserved, granted, promised from packs
      where id = any(${textArray(packIds)}) order by id collate "C" for no key update`),
  );
  const pools = rowsOf<{ pack_id: string; remaining: string }>(
    await tx.execute(sql`
      select pack_id, coalesce(sum(remaining), 0) as remaining from pack_pool_entries
      where pack_id = any(${textArray(packIds)}) group by pack_id`),
  );
  const remaining = new Map(pools.map((row) => [row.pack_id, Number(row.remaining)]));
  return new Map(
    locked.map((row) => [
      row.id,
      {
        status: row.status,
        cardsPerPack: row.cards_per_pack,
        supply: row.supply,
        sold: row.sold,
        opened: row.opened,
        reserved: row.reserved,
        granted: row.granted,
        promised: row.promised,
        remaining: remaining.get(row.id) ?? 0,
      },
    ]),
  );
}

/** Moves the packs' promised and granted counts by the given amounts, in id order; one statement. */
export async function movePackCounts(
  tx: Database,
  moves: readonly { packId: string; promised: number; granted: number }[],
): Promise<void> {
  if (moves.length === 0) return;
  const sorted = [...moves].sort((a, b) => (a.packId < b.packId ? -1 : a.packId > b.packId ? 1 : 0));
  const rows = rowsOf<{ id: string }>(
    await tx.execute(sql`
      update packs k set promised = k.promised + m.promised, granted = k.granted + m.granted
      from jsonb_to_recordset(${jsonb(sorted.map((move) => ({ pack_id: move.packId, promised: move.promised, granted: move.granted })))})
        as m(pack_id text, promised integer, granted integer)
      where k.id = m.pack_id returning k.id`),
  );
  if (rows.length !== moves.length)
    throw new Error(`moving the counts of ${moves.length} packs updated ${rows.length}`);
}

export async function findPromise(
  tx: Database,
  key: string,
  options: { lock?: boolean } = {},
): Promise<RewardPromiseRow | undefined> {
  const query = tx.select().from(rewardPromises).where(eq(rewardPromises.key, key));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

/** Inserts the promise unless its key exists; answers whether it did. */
export async function insertPromise(tx: Database, row: typeof rewardPromises.$inferInsert): Promise<boolean> {
  const inserted = await tx
    .insert(rewardPromises)
    .values(row)
    .onConflictDoNothing({ target: rewardPromises.key })
    .returning({ key: rewardPromises.key });
  return inserted.length === 1;
}

export async function updatePromise(
  tx: Database,
  key: string,
  set: Partial<Pick<RewardPromiseRow, 'granted' | 'released' | 'releasedAt'>>,
): Promise<RewardPromiseRow> {
  const [row] = await tx.update(rewardPromises).set(set).where(eq(rewardPromises.key, key)).returning();
  return row as RewardPromiseRow;
}

export async function findGrantBySource(db: Database, sourceKey: string): Promise<GrantRow | undefined> {
  return (await findGrantsBySource(db, [sourceKey])).get(sourceKey);
}

export async function findGrantsBySource(db: Database, sourceKeys: readonly string[]): Promise<Map<string, GrantRow>> {
  if (sourceKeys.length === 0) return new Map();
  const rows = await db
    .select()
    .from(grants)
    .where(sql`${grants.sourceKey} = any(${textArray(sourceKeys)})`);
  return new Map(rows.map((row) => [row.sourceKey, row]));
}

/** Inserts the grants whose source keys are free, in one statement; answers those inserted. */
export async function insertGrants(tx: Database, rows: (typeof grants.$inferInsert)[]): Promise<GrantRow[]> {
  if (rows.length === 0) return [];
  return tx.insert(grants).values(rows).onConflictDoNothing({ target: grants.sourceKey }).returning();
}

/**
 * Inserts the grant unless its source key exists: answers it, or undefined when the key was taken
 * (by a committed grant, or by a concurrent one this insert waited for and that committed).
 */
export async function insertGrant(tx: Database, row: typeof grants.$inferInsert): Promise<GrantRow | undefined> {
  const [inserted] = await insertGrants(tx, [row]);
  return inserted;
}

export async function findGrant(
  db: Database,
  id: string,
  options: { lock?: boolean } = {},
): Promise<GrantRow | undefined> {
  const query = db.select().from(grants).where(eq(grants.id, id));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

export async function updateGrant(
  tx: Database,
  id: string,
  set: Partial<typeof grants.$inferInsert>,
): Promise<GrantRow> {
  const [row] = await tx.update(grants).set(set).where(eq(grants.id, id)).returning();
  return row as GrantRow;
}

export async function listGrants(db: Database, userId: string, page: PageRequest) {
  const rows = await db
    .select()
    .from(grants)
    .where(and(eq(grants.userId, userId), afterCursor(grants.createdAt, grants.id, page.after)))
    .orderBy(desc(grants.createdAt), desc(grants.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

/** The ids among `userIds` of users who exist. */
export async function existingUsers(tx: Database, userIds: readonly string[]): Promise<Set<string>> {
  const rows = rowsOf<{ id: string }>(
    await tx.execute(sql`select id from users where id = any(${textArray(userIds)})`),
  );
  return new Set(rows.map((row) => row.id));
}

export interface GrantedPack {
  id: string;
  packId: string;
  serverSeed: string;
  serverSeedHash: string;
}

/** Grants' packs, owned and unopened by their users; one statement. */
export async function insertGrantedPacks(
  tx: Database,
  at: Date,
  owned: readonly (GrantedPack & { grantId: string; userId: string })[],
): Promise<void> {
  if (owned.length === 0) return;
  const rows = owned.map((pack) => ({
    id: pack.id,
    user_id: pack.userId,
    grant_id: pack.grantId,
    pack_id: pack.packId,
    server_seed: pack.serverSeed,
    server_seed_hash: pack.serverSeedHash,
  }));
  await tx.execute(sql`
    insert into user_packs (id, user_id, pack_id, grant_id, server_seed, server_seed_hash, created_at)
    select r.id, r.user_id, r.pack_id, r.grant_id, r.server_seed, r.server_seed_hash, ${at}
    from jsonb_to_recordset(${jsonb(rows)}) as r(id text, user_id text, grant_id text, pack_id text, server_seed text, server_seed_hash text)`);
}

/**
 * Takes back the grant's unopened packs (marks them revoked; an open holding one is waited for,
 * and the pack it opened is kept) and answers, per pack, how many were taken back and how many
 * stay with the user (opened).
 */
export async function revokeGrantedPacks(
  tx: Database,
  grantId: string,
  at: Date,
): Promise<{ takenBack: Map<string, number>; kept: number }> {
  const taken = rowsOf<{ pack_id: string; count: number }>(
    await tx.execute(sql`
      with taken as (
        update user_packs set revoked_at = ${at}
        where id in (select id from user_packs where grant_id = ${grantId} and opened_at is null and revoked_at is null order by id for update)
          and opened_at is null and revoked_at is null
        returning pack_id)
      select pack_id, count(*)::int as count from taken group by pack_id`),
  );
  const [kept] = rowsOf<{ count: number }>(
    await tx.execute(
      sql`select count(*)::int as count from user_packs where grant_id = ${grantId} and opened_at is not null`,
    ),
  );
  return { takenBack: new Map(taken.map((row) => [row.pack_id, row.count])), kept: kept?.count ?? 0 };
}

export async function countGrantPulls(tx: Database, grantId: string): Promise<number> {
  const [row] = rowsOf<{ count: number }>(
    await tx.execute(sql`select count(*)::int as count from pulls where grant_id = ${grantId}`),
  );
  return row?.count ?? 0;
}
