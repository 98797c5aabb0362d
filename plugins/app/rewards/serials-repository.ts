import { and, eq, sql } from 'drizzle-orm';
import { rewardSerials } from '../../../db/schema.js';
import type { Database } from '../database/index.js';
import type { RewardSerialBlock } from './serials.js';
import { jsonb, rowsOf } from '../rows.js';

/** SQL of the serial blocks of rewards and the copies grants give. Writes run in the caller's transaction. */

/**
 * Allocates to `owner` a block of `size` new serials of each collectible (growing its edition),
 * in collectible id order, each block with the seed given.
 */
export async function allocateBlocks(
  tx: Database,
  owner: string,
  blocks: readonly { collectibleId: string; size: number; serverSeed: string; serverSeedHash: string }[],
  now: Date,
): Promise<void> {
  for (const block of blocks) {
    const [grown] = (
      (await tx.execute(
        sql`update collectibles set edition_size = edition_size + ${block.size} where id = ${block.collectibleId} returning edition_size`,
      )) as unknown as { rows: { edition_size: number }[] }
    ).rows;
    if (!grown) throw new Error(`collectible ${block.collectibleId} vanished`);
    await tx.insert(rewardSerials).values({
      owner,
      collectibleId: block.collectibleId,
      first: grown.edition_size - block.size + 1,
      size: block.size,
      serverSeed: block.serverSeed,
      serverSeedHash: block.serverSeedHash,
      createdAt: now,
    });
  }
}

/** The owner's block of a collectible, locked until the transaction ends. */
export async function lockBlock(
  tx: Database,
  owner: string,
  collectibleId: string,
): Promise<RewardSerialBlock | undefined> {
  const [row] = await tx
    .select()
    .from(rewardSerials)
    .where(and(eq(rewardSerials.owner, owner), eq(rewardSerials.collectibleId, collectibleId)))
    .for('update');
  return row;
}

export async function saveBlock(
  tx: Database,
  owner: string,
  collectibleId: string,
  block: RewardSerialBlock,
): Promise<void> {
  await tx
    .update(rewardSerials)
    .set({ minted: block.minted, moved: block.moved })
    .where(and(eq(rewardSerials.owner, owner), eq(rewardSerials.collectibleId, collectibleId)));
}

/**
 * Writes the copies a grant gives: its pulls, the collectibles' minted counts and the owner's
 * score (each copy adds its collectible's points, as a drawn one does); one statement. Answers
 * the points the copies added.
 */
export async function writeGrantPulls(
  tx: Database,
  grant: { id: string; userId: string; at: Date },
  pulls: readonly { id: string; collectibleId: string; drawIndex: number; serialNumber: number }[],
): Promise<number> {
  if (pulls.length === 0) return 0;
  const rows = pulls.map((pull) => ({
    id: pull.id,
    collectible_id: pull.collectibleId,
    draw_index: pull.drawIndex,
    serial_number: pull.serialNumber,
  }));
  const [added] = rowsOf<{ points: string }>(
    await tx.execute(sql`
    with given as (select * from jsonb_to_recordset(${jsonb(rows)}) as g(id text, collectible_id text, draw_index integer, serial_number integer)),
    pulled as (
      insert into pulls (id, user_id, grant_id, collectible_id, draw_index, serial_number, created_at)
      select g.id, ${grant.userId}, ${grant.id}, g.collectible_id, g.draw_index, g.serial_number, ${grant.at} from given g returning 1),
    minted as (
      update collectibles c set minted = c.minted + n.count
      from (select collectible_id, count(*)::int as count from given group by 1) n where c.id = n.collectible_id returning c.points * n.count as points),
    scored as (
      update users set score = least(score::bigint + (select coalesce(sum(points), 0) from minted), 2147483647)::integer where id = ${grant.userId})
    select coalesce(sum(points), 0)::text as points from minted`),
  );
  return Number(added?.points ?? 0);
}
