import { createHash, createHmac } from 'node:crypto';
import type { DrawStep, FairnessProof } from '../../../schemas/purchases.js';
import type { PoolEntry } from './odds.js';

/**
 * The verifiable draw of an opened pack, with no I/O: from the server seed (committed to by its
 * hash at purchase), the client seed and the pool as it stood, anyone can recompute which
 * collectibles were drawn and at which serial positions.
 *
 * - Draw k (0-based) uses u_k: the first 13 hex digits (52 bits) of
 *   HMAC-SHA256(key = the 32 seed bytes, message = UTF-8 of `${clientSeed}:${k}`), over 2^52.
 * - The pool is ordered by collectible id in code-point order and walked, summing
 *   weight * remaining in IEEE doubles in that order, to the first entry whose running sum
 *   exceeds u_k * total; that entry loses one copy before the next draw.
 * - The copy's serial uses v_k, computed the same way from `${clientSeed}:${k}:serial`: position
 *   floor(v_k * unminted) among the entry's unminted serials.
 */

/** A server seed is 32 random bytes, written as 64 lowercase hex characters. */
export const SERVER_SEED_PATTERN = /^[0-9a-f]{64}$/;

/** 2^52: u and v carry 52 random bits, all that a double holds exactly below 1. */
const UNIFORM_SCALE = 2 ** 52;

function seedBytes(serverSeed: string): Buffer {
  if (!SERVER_SEED_PATTERN.test(serverSeed)) throw new TypeError('a server seed is 64 lowercase hex characters');
  return Buffer.from(serverSeed, 'hex');
}

/** The commitment published at purchase: the hex SHA-256 of the seed's 32 bytes. */
export function serverSeedHash(serverSeed: string): string {
  return createHash('sha256').update(seedBytes(serverSeed)).digest('hex');
}

/** A number in [0, 1) from the seed and a message: 52 bits of HMAC-SHA256, over 2^52. */
export function seededUniform(serverSeed: string, message: string): number {
  const hex = createHmac('sha256', seedBytes(serverSeed)).update(message, 'utf8').digest('hex');
  return Number.parseInt(hex.slice(0, 13), 16) / UNIFORM_SCALE;
}

/** Code-point order (JavaScript's `<` compares UTF-16 units, which differs past U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const difference = (left[i]?.codePointAt(0) ?? 0) - (right[i]?.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/** The pool in draw order: by collectible id, in code-point order. */
export function inDrawOrder<Entry extends PoolEntry>(pool: readonly Entry[]): Entry[] {
  return [...pool].sort((a, b) => compareCodePoints(a.collectibleId, b.collectibleId));
}

/**
 * The index of the entry drawn by `u` from a pool already in draw order: the first whose running
 * sum of weight * remaining exceeds u * total. An entry with no copy left adds nothing and is
 * never drawn.
 */
export function pickEntry(pool: readonly PoolEntry[], u: number): number {
  const total = pool.reduce((sum, entry) => sum + entry.weight * entry.remaining, 0);
  if (!(total > 0)) throw new RangeError('the pool has no copy left to draw');
  const target = u * total;
  let running = 0;
  for (const [index, entry] of pool.entries()) {
    running += entry.weight * entry.remaining;
    if (entry.remaining > 0 && running > target) return index;
  }
  // u < 1 makes u * total < total, which the last entry with copies reaches: not reachable.
  throw new RangeError(`u = ${u} drew nothing from a pool of total ${total}`);
}

/** Serial numbers first .. first + count - 1, allocated to a pool entry when its pack was published. */
export interface SerialBlock {
  first: number;
  count: number;
}

/**
 * The serials of one pool entry, as a lazy Fisher–Yates shuffle: the entry's blocks, in the
 * order they were allocated, form one virtual list; its first `minted` places hold the serials
 * already given out, the rest the unminted ones. Only places whose serial moved are stored.
 */
export interface SerialState {
  blocks: readonly SerialBlock[];
  minted: number;
  /** place in the virtual list → the serial now there, where it is not the place's own. */
  moved: ReadonlyMap<number, number>;
}

/** The serial a place of the virtual list started with. */
function serialAtPlace(blocks: readonly SerialBlock[], place: number): number {
  let offset = place;
  for (const block of blocks) {
    if (offset < block.count) return block.first + offset;
    offset -= block.count;
  }
  throw new RangeError(`place ${place} is past the entry's serial blocks`);
}

export function unmintedSerials(state: SerialState): number {
  return state.blocks.reduce((sum, block) => sum + block.count, 0) - state.minted;
}

/**
 * Gives out the serial at `position` among the unminted ones (0 <= position < unminted): the
 * serial there is taken, and the first unminted place's serial moves into its place. At most one
 * place changes per serial, whatever the size of the blocks (the returned state copies `moved`,
 * so a store keeps only the changes).
 */
export function takeSerial(state: SerialState, position: number): { serialNumber: number; state: SerialState } {
  const unminted = unmintedSerials(state);
  if (!Number.isInteger(position) || position < 0 || position >= unminted) {
    throw new RangeError(`position ${position} is outside the ${unminted} unminted serials`);
  }
  const serialAt = (place: number) => state.moved.get(place) ?? serialAtPlace(state.blocks, place);
  const firstUnminted = state.minted;
  const place = firstUnminted + position;
  const serialNumber = serialAt(place);
  const moved = new Map(state.moved);
  if (place !== firstUnminted) moved.set(place, serialAt(firstUnminted));
  // The first unminted place joins the minted ones and is never read again.
  moved.delete(firstUnminted);
  return { serialNumber, state: { blocks: state.blocks, minted: state.minted + 1, moved } };
}

/** One draw as the proof reveals it (schemas/purchases.ts). */
export type { DrawStep };

type DrawnPosition = Omit<DrawStep, 'serialNumber'>;

/**
 * The draws of one open without their serial numbers: which entry each takes and at which
 * position among its unminted serials (an entry has as many unminted serials as copies left).
 * Everything a fan can recompute from the revealed seeds and pool.
 */
export function drawPositions(
  serverSeed: string,
  clientSeed: string,
  count: number,
  pool: readonly PoolEntry[],
): { pool: PoolEntry[]; positions: DrawnPosition[]; poolAfter: PoolEntry[] } {
  const ordered = inDrawOrder(pool).map(({ collectibleId, weight, remaining }) => ({
    collectibleId,
    weight,
    remaining,
  }));
  const working = ordered.map((entry) => ({ ...entry }));
  const positions: DrawnPosition[] = [];
  for (let k = 0; k < count; k++) {
    const u = seededUniform(serverSeed, `${clientSeed}:${k}`);
    const entry = working[pickEntry(working, u)] as PoolEntry;
    const v = seededUniform(serverSeed, `${clientSeed}:${k}:serial`);
    const unminted = entry.remaining;
    positions.push({ k, u, v, collectibleId: entry.collectibleId, unminted, position: Math.floor(v * unminted) });
    entry.remaining -= 1;
  }
  return { pool: ordered, positions, poolAfter: working };
}

export interface DrawInput {
  serverSeed: string;
  clientSeed: string;
  cardsPerPack: number;
  pool: readonly PoolEntry[];
  /** The serial state of every entry of the pool with copies left, by collectible id. */
  serials: ReadonlyMap<string, SerialState>;
}

export interface DrawResult {
  /** The pool in draw order, as it stood before the first draw. */
  pool: PoolEntry[];
  draws: DrawStep[];
  /** The pool after the draws, in draw order. */
  poolAfter: PoolEntry[];
  /** The serial state after the draws of every entry that was drawn. */
  serialsAfter: Map<string, SerialState>;
}

/** Opens a pack: `cardsPerPack` draws, each taking one copy and one serial of its entry. */
export function drawPack(input: DrawInput): DrawResult {
  const { pool, positions, poolAfter } = drawPositions(
    input.serverSeed,
    input.clientSeed,
    input.cardsPerPack,
    input.pool,
  );
  const serialsAfter = new Map<string, SerialState>();
  const draws = positions.map((drawn): DrawStep => {
    const serials = serialsAfter.get(drawn.collectibleId) ?? input.serials.get(drawn.collectibleId);
    if (!serials) throw new RangeError(`no serial block for collectible ${drawn.collectibleId}`);
    if (unmintedSerials(serials) !== drawn.unminted) {
      throw new RangeError(
        `collectible ${drawn.collectibleId} has ${drawn.unminted} copies left but ${unmintedSerials(serials)} unminted serials`,
      );
    }
    const taken = takeSerial(serials, drawn.position);
    serialsAfter.set(drawn.collectibleId, taken.state);
    return { ...drawn, serialNumber: taken.serialNumber };
  });
  return { pool, draws, poolAfter, serialsAfter };
}

/** What an open result reveals for checking: its `fairness` object (schemas/purchases.ts). */
export type DrawProof = FairnessProof;

/**
 * Checks an open's proof as a fan would: the seed against the hash published at purchase, every
 * draw's u and v, the entry it took and its serial position, recomputed from the revealed pool;
 * and no serial given twice. The serial numbers themselves depend on the serials given out
 * before (not revealed); each must be one of a kind. An empty list means it checks out.
 */
export function verifyDrawProof(proof: DrawProof): string[] {
  if (!SERVER_SEED_PATTERN.test(proof.serverSeed)) return ['serverSeed is not 64 lowercase hex characters'];
  const problems: string[] = [];
  if (serverSeedHash(proof.serverSeed) !== proof.serverSeedHash)
    problems.push('serverSeedHash is not the SHA-256 of serverSeed');
  let expected: DrawnPosition[];
  try {
    expected = drawPositions(proof.serverSeed, proof.clientSeed, proof.draws.length, proof.pool).positions;
  } catch (error) {
    return [...problems, `the pool cannot give ${proof.draws.length} draws: ${(error as Error).message}`];
  }
  for (const [index, draw] of proof.draws.entries()) {
    const recomputed = expected[index] as DrawnPosition;
    for (const field of ['k', 'u', 'v', 'collectibleId', 'unminted', 'position'] as const) {
      if (draw[field] !== recomputed[field])
        problems.push(
          `draw ${index}: ${field} is ${JSON.stringify(draw[field])}, recomputed ${JSON.stringify(recomputed[field])}`,
        );
    }
  }
  const given = new Set<string>();
  for (const draw of proof.draws) {
    const key = `${draw.collectibleId}#${draw.serialNumber}`;
    if (!Number.isInteger(draw.serialNumber) || draw.serialNumber < 1)
      problems.push(`draw ${draw.k}: serial number ${draw.serialNumber} is not a positive integer`);
    if (given.has(key)) problems.push(`serial ${draw.serialNumber} of ${draw.collectibleId} is given twice`);
    given.add(key);
  }
  return problems;
}
