import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { collectibles, serialBlocks, serialStates } from '../../../db/schema.js';
import type { Database } from '../database/index.js';
import { rowsOf } from '../rows.js';
import type { SerialBlock } from './draw.js';
import { serialsToAllocate } from './serials.js';

/** SQL of serial numbers: each pool entry's state, blocks and moved places. Writes run in the caller's transaction. */

export interface StoredSerials {
  minted: number;
  allocated: number;
  blocks: SerialBlock[];
}

/**
 * Allocates, to every entry of the pool, serials for each copy not covered yet (a block of the
 * collectible's next numbers, which grows its editionSize), and answers every entry's serials.
 * The caller holds the pack's row lock.
 */
export async function allocateSerials(
  tx: Database,
  packId: string,
  pool: readonly { collectibleId: string; remaining: number }[],
  now: Date,
): Promise<Map<string, StoredSerials>> {
  const result = new Map<string, StoredSerials>();
  if (pool.length === 0) return result;
  await tx
    .insert(serialStates)
    .values(pool.map((entry) => ({ packId, collectibleId: entry.collectibleId })))
    .onConflictDoNothing();
  const ids = pool.map((entry) => entry.collectibleId);
  const states = await tx
    .select()
    .from(serialStates)
    .where(and(eq(serialStates.packId, packId), inArray(serialStates.collectibleId, ids)));
  const blocks = await tx
    .select()
    .from(serialBlocks)
    .where(and(eq(serialBlocks.packId, packId), inArray(serialBlocks.collectibleId, ids)))
    .orderBy(asc(serialBlocks.createdAt), asc(serialBlocks.first));
  for (const state of states)
    result.set(state.collectibleId, { minted: state.minted, allocated: state.allocated, blocks: [] });
  for (const block of blocks) result.get(block.collectibleId)?.blocks.push({ first: block.first, count: block.count });

  // Collectibles in one order, so two publishes sharing collectibles lock them the same way round.
  const needs = pool
    .map((entry) => ({
      collectibleId: entry.collectibleId,
      count: serialsToAllocate(result.get(entry.collectibleId) as StoredSerials, entry.remaining),
    }))
    .filter((need) => need.count > 0)
    .sort((a, b) => (a.collectibleId < b.collectibleId ? -1 : a.collectibleId > b.collectibleId ? 1 : 0));
  for (const need of needs) {
    const [grown] = await tx
      .update(collectibles)
      .set({ editionSize: sql`${collectibles.editionSize} + ${need.count}` })
      .where(eq(collectibles.id, need.collectibleId))
      .returning({ editionSize: collectibles.editionSize });
    const block = { first: (grown?.editionSize as number) - need.count + 1, count: need.count };
    await tx.insert(serialBlocks).values({ packId, collectibleId: need.collectibleId, ...block, createdAt: now });
    await tx
      .update(serialStates)
      .set({ allocated: sql`${serialStates.allocated} + ${need.count}` })
      .where(and(eq(serialStates.packId, packId), eq(serialStates.collectibleId, need.collectibleId)));
    const stored = result.get(need.collectibleId) as StoredSerials;
    stored.blocks.push(block);
    stored.allocated += need.count;
  }
  return result;
}

/**
 * The stored serials at the given places of each entry's list (places holding their own serial
 * are absent). The places are joined as arrays, so each is one lookup in the moves' primary key:
 * as a list of (collectible, place) pairs in an IN, the planner scanned every move of the pack
 * against every pair (8 ms a batch of 32 opens with a few thousand moves, growing with the pool).
 */
export async function loadMoves(
  tx: Database,
  packId: string,
  places: ReadonlyMap<string, ReadonlySet<number>>,
): Promise<Map<string, Map<number, number>>> {
  const moves = new Map<string, Map<number, number>>();
  for (const collectibleId of places.keys()) moves.set(collectibleId, new Map());
  const wanted = [...places].flatMap(([collectibleId, set]) =>
    [...set].map((place) => [collectibleId, place] as const),
  );
  if (wanted.length === 0) return moves;
  const rows = rowsOf<{ collectible_id: string; place: number; serial_number: number }>(
    await tx.execute(sql`
      select m.collectible_id, m.place, m.serial_number
      from unnest(${sql.param(wanted.map(([collectibleId]) => collectibleId))}::text[], ${sql.param(wanted.map(([, place]) => place))}::integer[]) as w(collectible_id, place)
      join serial_moves m on m.pack_id = ${packId} and m.collectible_id = w.collectible_id and m.place = w.place`),
  );
  for (const row of rows) moves.get(row.collectible_id)?.set(row.place, row.serial_number);
  return moves;
}
