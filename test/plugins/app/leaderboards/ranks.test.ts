import t from 'tap';
import {
  bucketsOf,
  canonicalBoardLine,
  countDeltas,
  LEVELS,
  MAX_BOARD_SCORE,
  ranksOfSlice,
  SCORE_OFFSET,
} from '../../../../plugins/app/leaderboards/ranks.js';

/** Fans above a score from the counts, summed the way leaderboard_fans_above does. */
function fansAboveFromCounts(counts: Map<string, number>, score: number): number {
  const mine = bucketsOf(score);
  let above = 0;
  for (const [key, fans] of counts) {
    const [level, bucket] = key.split(':').map(Number) as [number, number];
    const own = mine[level] as number;
    const parent = level + 1 < LEVELS ? (mine[level + 1] as number) : undefined;
    const sameParent = parent === undefined || Math.floor(bucket / 256) === parent;
    if (bucket > own && sameParent) above += fans;
  }
  return above;
}

const fansAboveByCounting = (scores: readonly number[], score: number) =>
  scores.filter((other) => other > score).length;

function countsOf(scores: readonly number[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const delta of countDeltas(scores.map((after) => ({ board: 'b', before: null, after }))))
    counts.set(`${delta.level}:${delta.bucket}`, delta.fans);
  return counts;
}

t.test('buckets: level k is the shifted score divided by 256^k', async (t) => {
  t.same(bucketsOf(0), [
    SCORE_OFFSET,
    SCORE_OFFSET / 256,
    SCORE_OFFSET / 256 ** 2,
    SCORE_OFFSET / 256 ** 3,
    SCORE_OFFSET / 256 ** 4,
    128,
  ]);
  t.equal(bucketsOf(-SCORE_OFFSET + 1)[5], 0, 'the lowest score is in the first top bucket');
  t.equal(bucketsOf(MAX_BOARD_SCORE)[5], 255, 'the highest in the last');
  t.throws(() => bucketsOf(SCORE_OFFSET), RangeError);
  t.throws(() => bucketsOf(1.5), RangeError);
  t.throws(() => bucketsOf(Number.NaN), RangeError);
});

t.test('fans above a score: the counts agree with counting, ties and negatives included', async (t) => {
  let seed = 7;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const scores = [
    ...Array.from({ length: 400 }, () => Math.floor(random() * 2_000) * 100),
    ...Array.from({ length: 200 }, () => Math.floor((random() - 0.5) * 1e9)),
    0,
    0,
    -1,
    255,
    256,
    65_535,
    65_536,
    MAX_BOARD_SCORE,

    -MAX_BOARD_SCORE,
  ];
  const counts = countsOf(scores);
  for (const score of [...scores.slice(0, 50), ...scores.slice(-11), 1, -2, 123_456_789])
    t.equal(fansAboveFromCounts(counts, score), fansAboveByCounting(scores, score), `above ${score}`);
});

t.test('a score that moves takes its fan out of the old buckets and into the new', async (t) => {
  const deltas = countDeltas([
    { board: 'b', before: 100, after: 300 },
    { board: 'b', before: null, after: 100 },
    { board: 'b', before: 5, after: 5 },
  ]);
  const level0 = deltas.filter((delta) => delta.level === 0);
  t.same(
    level0
      .map((delta) => [delta.bucket - SCORE_OFFSET, delta.fans])
      .sort((a, b) => (a[0] as number) - (b[0] as number)),
    [[300, 1]],
    'one fan left 100 and another arrived: only 300 moved at level 0',
  );
  t.ok(
    deltas.every((delta) => delta.fans !== 0),
    'no empty moves',
  );
  t.same(countDeltas([{ board: 'b', before: 7, after: 7 }]), [], 'an unchanged score moves nothing');
});

t.test('ranks of a slice: ties share a rank, the next counts every fan above, wherever the slice starts', async (t) => {
  const board = [30, 20, 20, 20, 10, 10, 5];
  const competition = board.map((score) => 1 + board.filter((other) => other > score).length);
  t.same(competition, [1, 2, 2, 2, 5, 5, 7]);
  for (let start = 0; start < board.length; start++)
    for (let end = start + 1; end <= board.length; end++) {
      const slice = board.slice(start, end);
      const top = slice[0] as number;
      const ranks = ranksOfSlice(
        slice,
        board.filter((score) => score > top).length,
        board.filter((score) => score === top).length,
      );
      t.same(ranks, competition.slice(start, end), `slice ${start}..${end}`);
    }
  t.same(ranksOfSlice([], 0, 0), []);
});

t.test('canonical lines: JSON without spaces, the score with two decimals', async (t) => {
  t.equal(canonicalBoardLine({ position: 3, rank: 2, userId: 'fan-"q"', score: -150 }), '[3,2,"fan-\\"q\\"","-1.50"]');
  t.equal(canonicalBoardLine({ position: 1, rank: 1, userId: 'a', score: 5 }), '[1,1,"a","0.05"]');
  t.equal(canonicalBoardLine({ position: 1, rank: 1, userId: 'a', score: 123_456_705 }), '[1,1,"a","1234567.05"]');
});
