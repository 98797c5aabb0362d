import type { SerialBlock } from './draw.js';

/**
 * Serial bookkeeping around the draw, with no I/O. A pool entry's serial list is its blocks in
 * allocation order; its first `minted` places are given out, and the next `remaining` places are
 * the copies left. Places past those (an entry whose quantity was lowered in a draft) are set
 * aside, and come back if the quantity is raised again.
 */

/** Serials to allocate to an entry so every copy it can still draw has one. */
export function serialsToAllocate(state: { minted: number; allocated: number }, remaining: number): number {
  return Math.max(0, state.minted + remaining - state.allocated);
}

/** The entry's blocks cut to their first `length` places: the serial list the draw works on. */
export function activeBlocks(blocks: readonly SerialBlock[], length: number): SerialBlock[] {
  const active: SerialBlock[] = [];
  let left = length;
  for (const block of blocks) {
    if (left <= 0) break;
    active.push({ first: block.first, count: Math.min(block.count, left) });
    left -= block.count;
  }
  if (left > 0) throw new RangeError(`the serial blocks hold ${length - left} places; ${length} are needed`);
  return active;
}

/**
 * The places of each entry's serial list that the draws will read: a draw at `position` reads
 * the place `minted + position` and the first unminted place `minted`, and each draw of an entry
 * mints one place. Only these need to be loaded.
 */
export function placesRead(
  draws: readonly { collectibleId: string; position: number }[],
  minted: ReadonlyMap<string, number>,
): Map<string, Set<number>> {
  const counted = new Map(minted);
  const places = new Map<string, Set<number>>();
  for (const draw of draws) {
    const first = counted.get(draw.collectibleId) ?? 0;
    const read = places.get(draw.collectibleId) ?? new Set<number>();
    read.add(first).add(first + draw.position);
    places.set(draw.collectibleId, read);
    counted.set(draw.collectibleId, first + 1);
  }
  return places;
}

/** What a store must write to go from `before` to `after`: places to set, and places to forget. */
export function movesChanged(
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
): { set: [number, number][]; removed: number[] } {
  const set = [...after].filter(([place, serial]) => before.get(place) !== serial);
  const removed = [...before.keys()].filter((place) => !after.has(place));
  return { set, removed };
}
