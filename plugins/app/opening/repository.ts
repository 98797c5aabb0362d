import { and, asc, eq, isNull, notInArray, sql } from 'drizzle-orm';
import { packOpens, packs, purchases, userPacks } from '../../../db/schema.js';
import type { PublicCollectible } from '../../../schemas/collectibles.js';
import type { Rarity } from '../../../schemas/enums.js';
import type { OpenResult } from '../../../schemas/purchases.js';
import type { Database } from '../database/index.js';
import { jsonb, rowsOf } from '../rows.js';
import type { SerialBlock } from '../packs/draw.js';

/**
 * SQL of opening owned packs. Writes run inside the caller's transaction. An open holds its
 * pack's row lock from the first statement below to the commit, so it does its work in few round
 * trips: lock, read the pool with its serials, read the places the draws need, write everything.
 */

/**
 * An owned pack as an open needs it, with its seeds: a bought pack's are its purchase's, a granted
 * pack's its own (user_packs_origin_check sets exactly one of them).
 */
const ownedPackColumns = {
  id: userPacks.id,
  userId: userPacks.userId,
  packId: userPacks.packId,
  purchaseId: userPacks.purchaseId,
  openedAt: userPacks.openedAt,
  serverSeed: sql<string>`coalesce(${purchases.serverSeed}, ${userPacks.serverSeed})`,
  serverSeedHash: sql<string>`coalesce(${purchases.serverSeedHash}, ${userPacks.serverSeedHash})`,
  clientSeed: purchases.clientSeed,
};

export async function findOpenResult(
  db: Database,
  key: { userPackId: string; userId: string },
): Promise<OpenResult | undefined> {
  const [row] = await db
    .select({ result: packOpens.result })
    .from(packOpens)
    .where(and(eq(packOpens.userPackId, key.userPackId), eq(packOpens.userId, key.userId)));
  return row?.result as OpenResult | undefined;
}

/** Takes the pack's row lock for the rest of the transaction and counts `count` opens; answers cardsPerPack and the team. */
export async function lockPackForOpen(
  tx: Database,
  packId: string,
  count: number,
): Promise<{ cardsPerPack: number; teamId: string | null } | undefined> {
  const [row] = await tx
    .update(packs)
    .set({ opened: sql`${packs.opened} + ${count}` })
    .where(eq(packs.id, packId))
    .returning({ cardsPerPack: packs.cardsPerPack, teamId: packs.teamId });
  return row;
}

export interface DrawEntry {
  collectibleId: string;
  weight: number;
  remaining: number;
  collectible: PublicCollectible;
  editionSize: number;
  /** The entry's serials: null before any were allocated. */
  serials: { minted: number; allocated: number; blocks: SerialBlock[] } | null;
}

/** The pack's pool in one query: each entry with its collectible, and its serial state and blocks. */
export async function readDrawPool(tx: Database, packId: string): Promise<DrawEntry[]> {
  const rows = rowsOf<{
    collectible_id: string;
    weight: number;
    remaining: number;
    team_id: string | null;
    name: string;
    description: string;
    image_url: string | null;
    rarity: Rarity;
    points: number;
    edition_size: number;
    minted: number | null;
    allocated: number | null;
    blocks: SerialBlock[];
  }>(
    await tx.execute(sql`
      select e.collectible_id, e.weight, e.remaining, c.team_id, c.name, c.description, c.image_url, c.rarity, c.points,
             c.edition_size, s.minted, s.allocated,
             coalesce((select json_agg(json_build_object('first', b.first, 'count', b.count) order by b.created_at, b.first)
                       from serial_blocks b where b.pack_id = e.pack_id and b.collectible_id = e.collectible_id), '[]'::json) as blocks
      from pack_pool_entries e
      join collectibles c on c.id = e.collectible_id
      left join serial_states s on s.pack_id = e.pack_id and s.collectible_id = e.collectible_id
      where e.pack_id = ${packId}`),
  );
  return rows.map((row) => ({
    collectibleId: row.collectible_id,
    weight: row.weight,
    remaining: row.remaining,
    collectible: {
      id: row.collectible_id,
      teamId: row.team_id,
      name: row.name,
      description: row.description,
      imageUrl: row.image_url,
      rarity: row.rarity,
      points: row.points,
    },
    editionSize: row.edition_size,
    serials:
      row.minted === null ? null : { minted: row.minted, allocated: row.allocated as number, blocks: row.blocks },
  }));
}

export interface OpenWrites {
  packId: string;
  openedAt: Date;
  /** Copies taken per collectible, over every open. */
  takes: { collectibleId: string; count: number }[];
  /** Moved serial places to set and to forget. */
  movesSet: { collectibleId: string; place: number; serialNumber: number }[];
  movesRemoved: { collectibleId: string; place: number }[];
  /** Points to add, per user. */
  scores: { userId: string; points: number }[];
  /** Each open: its owner and its result (whose items are the pulls). */
  opens: { userId: string; result: OpenResult }[];
}

/**
 * Locks the rows an open's write will update in more than one pack's opens (the collectibles
 * drawn, the owners), in one order, so two opens of packs sharing collectibles or owners never
 * wait for each other the wrong way round.
 */
export async function lockSharedRows(
  tx: Database,
  rows: { collectibleIds: string[]; userIds: string[] },
): Promise<void> {
  if (rows.collectibleIds.length === 0 || rows.userIds.length === 0) return;
  await tx.execute(
    sql`select 1 from collectibles where id in ${rows.collectibleIds} order by id collate "C" for no key update`,
  );
  await tx.execute(sql`select 1 from users where id in ${rows.userIds} order by id collate "C" for no key update`);
}

/**
 * Every write of one or more opens of a pack in one statement: copies out of the pool, serial
 * states and moves, collectibles' minted counts, the owners' scores, the stored results, the
 * pulls, and the owned packs marked opened. Rows are found by key from arrays (whose length the
 * planner knows), so each is an index lookup however large the tables have grown.
 */
export async function writeOpens(tx: Database, write: OpenWrites): Promise<void> {
  const takes = write.takes.map((take) => ({ collectible_id: take.collectibleId, n: take.count }));
  const set = write.movesSet.map((move) => ({
    collectible_id: move.collectibleId,
    place: move.place,
    serial_number: move.serialNumber,
  }));
  const removed = write.movesRemoved.map((move) => ({ collectible_id: move.collectibleId, place: move.place }));
  const scores = write.scores
    .filter((score) => score.points !== 0)
    .map((score) => ({ user_id: score.userId, points: score.points }));
  const stored = write.opens.map((open) => ({
    user_pack_id: open.result.userPackId,
    user_id: open.userId,
    result: open.result,
  }));
  const pulled = write.opens.flatMap((open) =>
    open.result.items.map((item, drawIndex) => ({
      id: item.id,
      user_id: open.userId,
      user_pack_id: open.result.userPackId,
      collectible_id: item.collectible.id,
      draw_index: drawIndex,
      serial_number: item.serialNumber,
    })),
  );
  const rows = rowsOf<{ pool: number; states: number; pulls: number; owned: number }>(
    await tx.execute(sql`
      with takes as (select * from jsonb_to_recordset(${jsonb(takes)}) as t(collectible_id text, n integer)),
      pool as (
        update pack_pool_entries e set remaining = e.remaining - t.n from takes t
        where e.pack_id = ${write.packId} and e.collectible_id = t.collectible_id returning 1),
      states as (
        update serial_states s set minted = s.minted + t.n from takes t
        where s.pack_id = ${write.packId} and s.collectible_id = t.collectible_id returning 1),
      minted as (update collectibles c set minted = c.minted + t.n from takes t where c.id = t.collectible_id returning 1),
      forgotten as (
        delete from serial_moves m
        using unnest(${sql.param(removed.map((move) => move.collectible_id))}::text[], ${sql.param(removed.map((move) => move.place))}::integer[]) as r(collectible_id, place)
        where m.pack_id = ${write.packId} and m.collectible_id = r.collectible_id and m.place = r.place returning 1),
      moved as (
        insert into serial_moves (pack_id, collectible_id, place, serial_number)
        select ${write.packId}, x.collectible_id, x.place, x.serial_number
        from jsonb_to_recordset(${jsonb(set)}) as x(collectible_id text, place integer, serial_number integer)
        on conflict (pack_id, collectible_id, place) do update set serial_number = excluded.serial_number returning 1),
      scored as (
        update users u set score = least(u.score::bigint + s.points, 2147483647)::integer
        from unnest(${sql.param(scores.map((score) => score.user_id))}::text[], ${sql.param(scores.map((score) => score.points))}::integer[]) as s(user_id, points)
        where u.id = s.user_id returning 1),
      stored as (
        insert into pack_opens (user_pack_id, user_id, pack_id, result, created_at)
        select o.user_pack_id, o.user_id, ${write.packId}, o.result, ${write.openedAt}
        from jsonb_to_recordset(${jsonb(stored)}) as o(user_pack_id text, user_id text, result jsonb) returning 1),
      pulled as (
        insert into pulls (id, user_id, user_pack_id, pack_id, collectible_id, draw_index, serial_number, created_at)
        select p.id, p.user_id, p.user_pack_id, ${write.packId}, p.collectible_id, p.draw_index, p.serial_number, ${write.openedAt}
        from jsonb_to_recordset(${jsonb(pulled)}) as p(id text, user_id text, user_pack_id text, collectible_id text, draw_index integer, serial_number integer)
        returning 1),
      owned as (
        update user_packs set opened_at = ${write.openedAt} where id = any(${sql.param(stored.map((open) => open.user_pack_id))}::text[]) returning 1)
      select (select count(*) from pool)::int as pool, (select count(*) from states)::int as states,
             (select count(*) from pulled)::int as pulls, (select count(*) from owned)::int as owned`),
  );
  const counts = rows[0];
  if (
    counts?.pool !== takes.length ||
    counts.states !== takes.length ||
    counts.pulls !== pulled.length ||
    counts.owned !== stored.length
  ) {
    throw new Error(
      `an open of pack ${write.packId} wrote ${JSON.stringify(counts)}; expected ${takes.length} entries, ${pulled.length} pulls, ${stored.length} packs`,
    );
  }
}

/**
 * Locks the user's oldest unopened pack of a pack, but those excluded and those another
 * transaction is opening (skipped, not waited for), with its seeds.
 */
export async function lockOldestUnopened(tx: Database, userId: string, packId: string, excluding: string[]) {
  const [row] = await tx
    .select(ownedPackColumns)
    .from(userPacks)
    .leftJoin(purchases, eq(purchases.id, userPacks.purchaseId))
    .where(
      and(
        eq(userPacks.userId, userId),
        eq(userPacks.packId, packId),
        isNull(userPacks.openedAt),
        isNull(userPacks.revokedAt),
        excluding.length > 0 ? notInArray(userPacks.id, excluding) : undefined,
      ),
    )
    .orderBy(asc(userPacks.createdAt), asc(userPacks.id))
    .limit(1)
    .for('update', { of: userPacks, skipLocked: true });
  return row;
}

/**
 * Locks owned packs for the rest of the transaction, in id order (so concurrent batches lock them
 * the same way round), each with its seeds. Packs not owned by the given user (or taken back) are absent.
 */
export async function lockOwnedPacks(tx: Database, keys: readonly { id: string; userId: string }[]) {
  if (keys.length === 0) return [];
  return tx
    .select(ownedPackColumns)
    .from(userPacks)
    .leftJoin(purchases, eq(purchases.id, userPacks.purchaseId))
    .where(
      and(
        sql`(${userPacks.id}, ${userPacks.userId}) in (${sql.join(
          keys.map((key) => sql`(${key.id}, ${key.userId})`),
          sql`, `,
        )})`,
        // A pack a revocation took back is no longer the user's.
        isNull(userPacks.revokedAt),
      ),
    )
    .orderBy(asc(userPacks.id))
    .for('update', { of: userPacks });
}
