import type { PackRow } from '../../../db/schema.js';
import type { PackActionBody, UpdatePackBody } from '../../../schemas/packs.js';
import { MAX_POOL_ENTRIES } from '../../../schemas/packs.js';
import { isAllowed, type Principal } from '../auth/policy.js';
import type { CollectiblesService } from '../collectibles/service.js';
import type { Database } from '../database/index.js';
import { committedCopies, committedPacks } from '../purchases/rules.js';
import { collectibleNotFound } from '../collectibles/errors.js';
import {
  collectibleWrongTeam,
  invalidTransition,
  packNotDraft,
  poolCannotFillPack,
  poolCommitted,
  poolEntryNotFound,
  poolFull,
  supplyBelowSales,
} from './errors.js';
import { nextStatus } from './lifecycle.js';
import { canFillOnePack, totalRemaining } from './odds.js';
import { deletePoolEntry, type PoolRow, updatePack, upsertPoolEntry } from './repository.js';
import { allocateSerials } from './serials-repository.js';
import { toEntryRecord, toPackRecord } from './views.js';

/**
 * The changes of one pack, each run in the transaction of packs/service.ts's changePack (which
 * holds the pack's row lock, authorizes and audits): what they check and write, and what the
 * audit row keeps of them.
 */

/** What a change of a pack did, for its audit row; undefined when it changed nothing. */
export type PackChange = { pack: PackRow; before: unknown; after: unknown } | undefined;

/** A change of the pack's own fields, audited as the pack before and after. */
const fieldsChange = (pack: PackRow, changed: PackRow): PackChange => ({
  pack: changed,
  before: toPackRecord(pack),
  after: toPackRecord(changed),
});

/** Throws pool_committed when a pool of `remaining` copies could not fill the packs sold unopened or reserved. */
function assertPoolCovers(pack: PackRow, reserved: number, remaining: number): void {
  const needed = committedCopies({ ...pack, reserved });
  if (remaining < needed)
    throw poolCommitted(
      `the pool would hold ${remaining} copies; the packs sold unopened or reserved need ${needed}`,
      '/quantity',
    );
}

/** PATCH: the pack's fields (price, cardsPerPack, supply and maxPerUser only on a draft). */
export async function updateFields(
  tx: Database,
  pack: PackRow,
  now: Date,
  reserved: number,
  body: UpdatePackBody,
): Promise<PackChange> {
  const draftOnly = (['price', 'cardsPerPack', 'supply', 'maxPerUser'] as const).filter(
    (field) => body[field] !== undefined,
  );
  if (draftOnly.length > 0 && pack.status !== 'draft') {
    throw packNotDraft(pack.status, draftOnly);
  }
  if (
    body.cardsPerPack !== undefined &&
    body.cardsPerPack !== pack.cardsPerPack &&
    committedCopies({ ...pack, reserved }) > 0
  ) {
    throw poolCommitted('cardsPerPack cannot change while packs of it are sold unopened or reserved', '/cardsPerPack');
  }
  // Granted reward packs count as sold, promised ones as reserved.
  if (body.supply !== undefined && body.supply !== null && body.supply < committedPacks({ ...pack, reserved })) {
    throw supplyBelowSales(pack.sold + pack.granted, reserved + pack.promised);
  }
  const changed = await updatePack(tx, pack.id, {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.imageUrl !== undefined ? { imageUrl: body.imageUrl } : {}),
    ...(body.price !== undefined ? { price: body.price } : {}),
    ...(body.cardsPerPack !== undefined ? { cardsPerPack: body.cardsPerPack } : {}),
    ...(body.supply !== undefined ? { supply: body.supply } : {}),
    ...(body.maxPerUser !== undefined ? { maxPerUser: body.maxPerUser } : {}),
    updatedAt: now,
  });
  return fieldsChange(pack, changed);
}

/** One action of the state machine (or of the draft's pool), on the pool as read under the lock. */
export async function applyPackAction(
  tx: Database,
  collectibles: Pick<CollectiblesService, 'find'>,
  principal: Principal,
  change: { pack: PackRow; now: Date; pool: PoolRow[]; reserved: number },
  body: PackActionBody,
): Promise<PackChange> {
  const { pack, now, pool, reserved } = change;
  const to = nextStatus(pack.status, body.action);
  if (!to) {
    throw invalidTransition(pack.status, body.action);
  }
  switch (body.action) {
    case 'publish': {
      // `pool` was read under the row lock: the pool as it stands.
      if (!canFillOnePack(pool, pack.cardsPerPack)) {
        throw poolCannotFillPack(totalRemaining(pool), pack.cardsPerPack);
      }
      // Every copy gets its serial now, so no serial depends on when its pack is opened.
      await allocateSerials(tx, pack.id, pool, now);
      return fieldsChange(pack, await updatePack(tx, pack.id, { status: to, publishedAt: now, updatedAt: now }));
    }
    case 'archive':
      return fieldsChange(pack, await updatePack(tx, pack.id, { status: to, archivedAt: now, updatedAt: now }));
    case 'restore':
      return fieldsChange(
        pack,
        await updatePack(tx, pack.id, { status: to, archivedAt: null, publishedAt: null, updatedAt: now }),
      );
    case 'addCollectible': {
      const collectibleId = body.collectibleId as string;
      const collectible = await collectibles.find(tx, collectibleId);
      if (!collectible) throw collectibleNotFound();
      if (collectible.teamId !== null && collectible.teamId !== pack.teamId) {
        // Another team's collectible the caller cannot see answers as if it did not exist.
        if (!isAllowed(principal, 'catalog:read', collectible)) throw collectibleNotFound();
        throw collectibleWrongTeam();
      }
      const entry = pool.find((candidate) => candidate.collectibleId === collectibleId);
      const unchanged =
        entry !== undefined &&
        (body.quantity === undefined || body.quantity === entry.remaining) &&
        (body.weight === undefined || body.weight === entry.weight);
      if (unchanged) return undefined;
      if (!entry && pool.length >= MAX_POOL_ENTRIES) {
        throw poolFull();
      }
      const added = {
        collectibleId,
        weight: body.weight ?? entry?.weight ?? 1,
        remaining: body.quantity ?? entry?.remaining ?? 1,
      };
      assertPoolCovers(pack, reserved, totalRemaining(pool) - (entry?.remaining ?? 0) + added.remaining);
      await upsertPoolEntry(tx, {
        packId: pack.id,
        collectibleId,
        quantity: body.quantity,
        weight: body.weight,
        now,
      });
      return {
        pack: await updatePack(tx, pack.id, { updatedAt: now }),
        before: toEntryRecord(entry),
        after: toEntryRecord(added),
      };
    }
    case 'removeCollectible': {
      const entry = pool.find((candidate) => candidate.collectibleId === body.collectibleId);
      if (entry) assertPoolCovers(pack, reserved, totalRemaining(pool) - entry.remaining);
      if (!entry || !(await deletePoolEntry(tx, pack.id, entry.collectibleId))) {
        throw poolEntryNotFound();
      }
      return {
        pack: await updatePack(tx, pack.id, { updatedAt: now }),
        before: toEntryRecord(entry),
        after: null,
      };
    }
  }
}
