import { createHash } from 'node:crypto';
import t from 'tap';
import { drawPack, drawPositions, type SerialState } from '../../../../plugins/app/packs/draw.js';
import { drawOdds } from '../../../../plugins/app/packs/odds.js';
import { chiSquare, chiSquareCritical } from '../../../support/statistics.js';
import { databaseIndependent } from '../../../support/suites.js';

// Deterministic seeds: the tests always pass or always fail, and a wrong draw fails them (a
// fair draw passes at the 0.001 level; the critical values are far from the statistics seen).
const seed = (i: number) => createHash('sha256').update(`statistics seed ${i}`).digest('hex');

function drawCounts(pool: { collectibleId: string; weight: number; remaining: number }[], samples: number): number[] {
  const index = new Map(pool.map((entry, i) => [entry.collectibleId, i]));
  const counts = pool.map(() => 0);
  for (let i = 0; i < samples; i++) {
    const [first] = drawPositions(seed(i), 'client', 1, pool).positions;
    const at = index.get(first?.collectibleId as string) as number;
    counts[at] = (counts[at] ?? 0) + 1;
  }
  return counts;
}

t.test('draws follow the published odds (chi-square, p = 0.001)', databaseIndependent, async (t) => {
  const pools = {
    'equal weights': ['a', 'b', 'c', 'd', 'e'].map((id) => ({ collectibleId: id, weight: 1, remaining: 200 })),
    'unequal weights and quantities': [
      { collectibleId: 'common', weight: 1, remaining: 600 },
      { collectibleId: 'rare', weight: 2.5, remaining: 40 },
      { collectibleId: 'epic', weight: 0.5, remaining: 90 },
      { collectibleId: 'legendary', weight: 10, remaining: 3 },
    ],
  };
  for (const [name, pool] of Object.entries(pools)) {
    const samples = 20_000;
    const observed = drawCounts(pool, samples);
    const expected = drawOdds(pool).map((entry) => entry.probability * samples);
    const statistic = chiSquare(observed, expected);
    t.ok(
      statistic < chiSquareCritical(pool.length - 1),
      `${name}: chi-square ${statistic.toFixed(2)} < ${chiSquareCritical(pool.length - 1).toFixed(2)} (observed ${observed.join(', ')})`,
    );
  }

  // A draw that ignored the weights would fail the same test: the test can fail.
  const weighted = pools['unequal weights and quantities'];
  const observed = drawCounts(
    weighted.map((entry) => ({ ...entry, weight: 1 })),
    20_000,
  );
  const expected = drawOdds(weighted).map((entry) => entry.probability * 20_000);
  t.ok(chiSquare(observed, expected) > chiSquareCritical(3), 'ignoring the weights is detected');
});

t.test(
  'serial positions are uniform over the block, for the first opener and the last',
  databaseIndependent,
  async (t) => {
    const editionSize = 20;
    const trials = 4000;
    const first = Array.from({ length: editionSize }, () => 0);
    const last = Array.from({ length: editionSize }, () => 0);
    let repeated = 0;
    for (let trial = 0; trial < trials; trial++) {
      // A drop of `editionSize` copies opened one by one: the whole lifetime of one entry's serials.
      let pool = [{ collectibleId: 'card', weight: 1, remaining: editionSize }];
      let serials: SerialState = { blocks: [{ first: 1, count: editionSize }], minted: 0, moved: new Map() };
      const given: number[] = [];
      for (let open = 0; open < editionSize; open++) {
        const result = drawPack({
          serverSeed: seed(trial * editionSize + open),
          clientSeed: `open ${open}`,
          cardsPerPack: 1,
          pool,
          serials: new Map([['card', serials]]),
        });
        given.push(result.draws[0]?.serialNumber as number);
        pool = result.poolAfter;
        serials = result.serialsAfter.get('card') as SerialState;
      }
      if (new Set(given).size !== editionSize) repeated++;
      const firstSerial = (given[0] as number) - 1;
      const lastSerial = (given[editionSize - 1] as number) - 1;
      first[firstSerial] = (first[firstSerial] ?? 0) + 1;
      last[lastSerial] = (last[lastSerial] ?? 0) + 1;
    }
    t.equal(repeated, 0, 'every drop gave every serial exactly once');
    const expected = first.map(() => trials / editionSize);
    const critical = chiSquareCritical(editionSize - 1);
    t.ok(
      chiSquare(first, expected) < critical,
      `the first opener's serial: chi-square ${chiSquare(first, expected).toFixed(2)} < ${critical.toFixed(2)}`,
    );
    t.ok(
      chiSquare(last, expected) < critical,
      `the last opener's serial: chi-square ${chiSquare(last, expected).toFixed(2)} < ${critical.toFixed(2)}`,
    );
    t.ok(
      (first[0] as number) < (trials / editionSize) * 1.5,
      `#1 went to the first opener ${first[0]} times of ${trials} (${trials / editionSize} expected)`,
    );
    // Numbering copies in opening order would give the first opener #1 every time: detected.
    const inOrder = first.map((_, index) => (index === 0 ? trials : 0));
    t.ok(chiSquare(inOrder, expected) > critical, 'serials in opening order are detected');
  },
);
