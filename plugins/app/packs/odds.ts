/**
 * Odds and availability. Every remaining copy
 * of an entry weighs the entry's weight, so entry i is drawn with probability
 * weight_i * remaining_i / sum_j(weight_j * remaining_j).
 */

export interface PoolEntry {
  collectibleId: string;
  weight: number;
  remaining: number;
}

export interface EntryOdds extends PoolEntry {
  probability: number;
}

/** Per-draw probability of each entry, in the pool's order. Entries with no copy left have 0. */
export function drawOdds(pool: readonly PoolEntry[]): EntryOdds[] {
  const total = pool.reduce((sum, entry) => sum + entry.weight * entry.remaining, 0);
  return pool.map((entry) => ({
    ...entry,
    probability: total > 0 ? (entry.weight * entry.remaining) / total : 0,
  }));
}

export function totalRemaining(pool: readonly PoolEntry[]): number {
  return pool.reduce((sum, entry) => sum + entry.remaining, 0);
}

/** A pack can be published when its pool can fill at least one pack. */
export function canFillOnePack(pool: readonly PoolEntry[], cardsPerPack: number): boolean {
  return totalRemaining(pool) >= cardsPerPack;
}

/**
 * Packs that can still be sold (or promised) without any pack already owed becoming unfillable:
 * floor(total remaining / cardsPerPack) - outstanding, where outstanding counts the owned,
 * unopened packs (sold + granted - opened: opened packs already took their copies out of the
 * pool), the reserved ones and those promised to rewards; capped, when `supply` (the most packs
 * ever sold or granted) is set, by supply - sold - granted - reserved - promised. Never negative.
 */
export function availablePacks(input: {
  totalRemaining: number;
  cardsPerPack: number;
  supply: number | null;
  sold: number;
  granted: number;
  opened: number;
  reserved: number;
  promised: number;
}): number {
  const held = input.reserved + input.promised;
  const fillable =
    Math.floor(input.totalRemaining / input.cardsPerPack) - (input.sold + input.granted - input.opened) - held;
  const bySupply = input.supply === null ? fillable : input.supply - input.sold - input.granted - held;
  return Math.max(0, Math.min(fillable, bySupply));
}
