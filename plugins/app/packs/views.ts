import type { PackRow } from '../../../db/schema.js';
import type { AdminPack, AdminPackSummary, PackRecord, PublicPack } from '../../../schemas/packs.js';
import { availableFor } from '../purchases/rules.js';
import type { CatalogChange } from './catalog-cache.js';
import { drawOdds, totalRemaining } from './odds.js';
import type { PoolRow } from './repository.js';

/** How packs are shown: to the public, to admins, and to the audit log. */

/** Packs that can be sold now: the pool's copies less those held by reservations and unopened packs. */
function availableOf(pack: PackRow, remaining: number, reserved: number): number {
  return availableFor({ ...pack, remaining, reserved });
}

export function toPublicPack(pack: PackRow, remaining: number, reserved: number): PublicPack {
  return {
    id: pack.id,
    teamId: pack.teamId,
    name: pack.name,
    description: pack.description,
    imageUrl: pack.imageUrl,
    price: pack.price,
    cardsPerPack: pack.cardsPerPack,
    available: availableOf(pack, remaining, reserved),
    publishedAt: (pack.publishedAt as Date).toISOString(),
  };
}

/** The pack as the audit log keeps it: its own fields, without the pool (audited entry by entry). */
export function toPackRecord(pack: PackRow): PackRecord {
  return {
    id: pack.id,
    teamId: pack.teamId,
    name: pack.name,
    description: pack.description,
    imageUrl: pack.imageUrl,
    status: pack.status,
    price: pack.price,
    cardsPerPack: pack.cardsPerPack,
    supply: pack.supply,
    maxPerUser: pack.maxPerUser,
    sold: pack.sold,
    opened: pack.opened,
    publishedAt: pack.publishedAt?.toISOString() ?? null,
    archivedAt: pack.archivedAt?.toISOString() ?? null,
    createdAt: pack.createdAt.toISOString(),
    updatedAt: pack.updatedAt.toISOString(),
  };
}

/** An admin list's item: the pack and the size of its pool, which GET /api/admin/packs/{id} shows in full. */
export function toAdminPackSummary(
  pack: PackRow,
  pool: { entries: number; remaining: number },
  reserved: number,
): AdminPackSummary {
  return { ...toPackRecord(pack), available: availableOf(pack, pool.remaining, reserved), poolSize: pool.entries };
}

export function toAdminPack(pack: PackRow, pool: PoolRow[], reserved: number): AdminPack {
  const odds = drawOdds(pool);
  return {
    ...toPackRecord(pack),
    available: availableOf(pack, totalRemaining(pool), reserved),
    pool: pool.map((entry, index) => ({
      collectibleId: entry.collectibleId,
      name: entry.collectible.name,
      rarity: entry.collectible.rarity,
      weight: entry.weight,
      remaining: entry.remaining,
      probability: odds[index]?.probability ?? 0,
    })),
  };
}

/** A pool entry as the audit log keeps it. */
export const toEntryRecord = (entry: { collectibleId: string; weight: number; remaining: number } | undefined) =>
  entry ? { collectibleId: entry.collectibleId, weight: entry.weight, remaining: entry.remaining } : null;

export const NO_PUBLIC_CHANGE: CatalogChange = { lists: false, packIds: [] };

/**
 * The public responses a change of one pack can affect: none unless the pack is active before or
 * after it (a draft or an archived pack is in no public response), else the lists and its detail.
 */
export function publicChangeOf(before: PackRow, after: PackRow): CatalogChange {
  return before.status === 'active' || after.status === 'active'
    ? { lists: true, packIds: [before.id] }
    : NO_PUBLIC_CHANGE;
}
