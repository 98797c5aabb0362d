import { type SerialState, seededUniform, takeSerial } from '../packs/draw.js';

/**
 * Serial numbers of the collectibles a reward gives, with no I/O. A promise (or a grant made
 * without one) gets a block of each collectible's next serials, and a server seed committed to by
 * its hash; each copy a grant gives takes one serial of the block by the lazy shuffle of
 * packs/draw.ts at position floor(v × unminted), where v is the uniform number of
 * HMAC-SHA256(seed, `${sourceKey}:${collectibleId}:${i}`). Anyone with the revealed seed, the
 * grant's source key and the block's state can recompute it.
 */

export interface RewardSerialBlock {
  first: number;
  size: number;
  minted: number;
  /** place → serial, for the places whose serial moved. */
  moved: Record<string, number>;
  serverSeed: string;
  serverSeedHash: string;
}

export interface DrawnSerial {
  collectibleId: string;
  serialNumber: number;
  message: string;
  v: number;
  unminted: number;
  position: number;
  serverSeedHash: string;
  serverSeed: string;
}

/** The message whose HMAC draws copy `index` of a collectible for the grant of `sourceKey`. */
export const serialMessage = (sourceKey: string, collectibleId: string, index: number) =>
  `${sourceKey}:${collectibleId}:${index}`;

/** Draws `count` serials from the block for the grant of `sourceKey`; answers them and the block after. */
export function drawRewardSerials(
  block: RewardSerialBlock,
  collectibleId: string,
  sourceKey: string,
  count: number,
): { serials: DrawnSerial[]; block: RewardSerialBlock } {
  let state: SerialState = {
    blocks: [{ first: block.first, count: block.size }],
    minted: block.minted,
    moved: new Map(Object.entries(block.moved).map(([place, serial]) => [Number(place), serial])),
  };
  const serials: DrawnSerial[] = [];
  for (let index = 0; index < count; index++) {
    const message = serialMessage(sourceKey, collectibleId, index);
    const v = seededUniform(block.serverSeed, message);
    const unminted = block.size - state.minted;
    const position = Math.floor(v * unminted);
    const taken = takeSerial(state, position);
    state = taken.state;
    serials.push({
      collectibleId,
      serialNumber: taken.serialNumber,
      message,
      v,
      unminted,
      position,
      serverSeedHash: block.serverSeedHash,
      serverSeed: block.serverSeed,
    });
  }
  return {
    serials,
    block: {
      ...block,
      minted: state.minted,
      moved: Object.fromEntries([...state.moved].map(([p, s]) => [String(p), s])),
    },
  };
}
