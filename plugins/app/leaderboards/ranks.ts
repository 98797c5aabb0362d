import { createHash } from 'node:crypto';

/**
 * The rank structure of a live board, as pure arithmetic: how many fans hold each score, counted
 * at six levels (level 0 per score, level k per run of 256^k scores). The repository keeps the
 * counts and sums at most 255 buckets per level to count the fans above a score, whatever the
 * size of the board. Scores are hundredths of a point.
 */

/** Scores are shifted by this so that buckets are never negative. */
export const SCORE_OFFSET = 2 ** 47;
export const LEVELS = 6;
const LEVEL_WIDTH = 256;
/** The largest score a board holds either way (a bucket must stay an exact JavaScript integer). */
export const MAX_BOARD_SCORE = SCORE_OFFSET - 1;

/** The bucket of `score` at each level, level 0 first. */
export function bucketsOf(score: number): number[] {
  if (!Number.isSafeInteger(score) || Math.abs(score) > MAX_BOARD_SCORE)
    throw new RangeError(`a board score is an integer within ±${MAX_BOARD_SCORE}`);
  const key = score + SCORE_OFFSET;
  return Array.from({ length: LEVELS }, (_, level) => Math.floor(key / LEVEL_WIDTH ** level));
}

export interface ScoreChange {
  board: string;
  /** The score before (null: the fan was not on the board). */
  before: number | null;
  after: number;
}

export interface CountDelta {
  board: string;
  level: number;
  bucket: number;
  fans: number;
}

/** What score changes do to the counts: one fan less in each bucket of the old score, one more in the new one's. */
export function countDeltas(changes: readonly ScoreChange[]): CountDelta[] {
  const deltas = new Map<string, CountDelta>();
  const add = (board: string, score: number, fans: number) => {
    bucketsOf(score).forEach((bucket, level) => {
      const key = `${board}\u0000${level}\u0000${bucket}`;
      const delta = deltas.get(key);
      if (delta) delta.fans += fans;
      else deltas.set(key, { board, level, bucket, fans });
    });
  };
  for (const change of changes) {
    if (change.before === change.after) continue;
    if (change.before !== null) add(change.board, change.before, -1);
    add(change.board, change.after, 1);
  }
  return [...deltas.values()].filter((delta) => delta.fans !== 0);
}

/**
 * Competition ranks ("1224") of a contiguous slice of a board, in board order (score descending),
 * from two counts of the whole board: the fans above the slice's top score and the fans holding
 * it. Every fan whose score lies strictly between a row's and the top is in the slice, so the
 * rest is counted from the slice itself.
 */
export function ranksOfSlice(scores: readonly number[], fansAboveTop: number, fansAtTop: number): number[] {
  const top = scores[0];
  let topInSlice = 0;
  let firstOfScore = 0;
  return scores.map((score, index) => {
    if (score === top) {
      topInSlice++;
      return fansAboveTop + 1;
    }
    if (score !== scores[index - 1]) firstOfScore = index;
    return fansAboveTop + fansAtTop + (firstOfScore - topInSlice) + 1;
  });
}

/** Points as the API shows them: hundredths as a number with at most two decimals. */
export const toPoints = (hundredths: number): number => hundredths / 100;

/** A frozen row's canonical line: JSON of [position, rank, userId, score with two decimals]. */
export function canonicalBoardLine(row: { position: number; rank: number; userId: string; score: number }): string {
  return JSON.stringify([row.position, row.rank, row.userId, (row.score / 100).toFixed(2)]);
}

/**
 * The hash of a frozen board, built row by row in position order: SHA-256 of the canonical
 * lines joined by "\n". Served rows give the same lines (their score is hundredths / 100).
 */
export function boardHasher() {
  const hash = createHash('sha256');
  let first = true;
  return {
    add(row: { position: number; rank: number; userId: string; score: number }) {
      hash.update(`${first ? '' : '\n'}${canonicalBoardLine(row)}`);
      first = false;
    },
    digest: () => hash.digest('hex'),
  };
}
