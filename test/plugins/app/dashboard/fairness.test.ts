import t from 'tap';
import {
  chiSquareFit,
  chiSquareSurvival,
  logGamma,
  regularizedUpperGamma,
} from '../../../../plugins/app/dashboard/fairness.js';

/** The fairness check's statistics, against published values and simulated draws. */

const close = (actual: number, expected: number, tolerance: number) => Math.abs(actual - expected) <= tolerance;

t.test('ln Γ matches known values', async (t) => {
  const cases: [number, number][] = [
    [1, 0],
    [2, 0],
    [0.5, Math.log(Math.sqrt(Math.PI))],
    [5, Math.log(24)],
    [10.5, 13.940625219403763],
    [100, 359.1342053695754],
  ];
  for (const [z, expected] of cases) t.ok(close(logGamma(z), expected, 1e-10), `ln Γ(${z}) = ${expected}`);
});

t.test('the chi-square survival function gives the published critical values', async (t) => {
  // Quantiles from standard chi-square tables (upper tail 0.05, 0.01, 0.001).
  const cases: [number, number, number][] = [
    [3.841458820694124, 1, 0.05],
    [6.634896601021214, 1, 0.01],
    [5.991464547107979, 2, 0.05],
    [18.307038053275146, 10, 0.05],
    [29.588298445074418, 10, 0.001],
    [124.34211340400407, 100, 0.05],
  ];
  for (const [x, k, p] of cases) t.ok(close(chiSquareSurvival(x, k), p, 1e-9), `P(X_${k} >= ${x}) = ${p}`);
  t.equal(chiSquareSurvival(0, 3), 1, 'nothing is below 0');
  t.equal(chiSquareSurvival(Number.POSITIVE_INFINITY, 3), 0);
  // Q(1, x) = e^-x exactly, on both sides of the series/fraction switch (x < a + 1).
  for (const x of [0.1, 1.9, 2.1, 30, 700]) t.ok(close(regularizedUpperGamma(1, x), Math.exp(-x), 1e-14), `Q(1, ${x})`);
  // Two degrees of freedom: Q(1, x/2) = e^(-x/2).
  t.ok(close(chiSquareSurvival(40, 2), Math.exp(-20), 1e-20), 'a far tail keeps its digits');
  t.throws(() => chiSquareSurvival(1, 0), RangeError);
  t.throws(() => regularizedUpperGamma(-1, 1), RangeError);
});

/** A seeded generator (mulberry32): the same draws on every run. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function draw(shares: readonly number[], draws: number, next: () => number): number[] {
  const total = shares.reduce((sum, share) => sum + share, 0);
  const counts = shares.map(() => 0);
  for (let i = 0; i < draws; i++) {
    let u = next() * total;
    let index = 0;
    while (index < shares.length - 1 && u >= (shares[index] as number)) u -= shares[index++] as number;
    counts[index] = (counts[index] as number) + 1;
  }
  return counts;
}

t.test('a fair draw passes and a rigged one fails', async (t) => {
  const published = [50, 30, 15, 4, 1];
  // A rigged draw: the legendary and epic copies come out at a third of their published rate.
  const rigged = [52, 31, 15.6, 4 / 3, 1 / 3];
  const fairPValues: number[] = [];
  for (let seed = 1; seed <= 20; seed++) {
    const fair = chiSquareFit(draw(published, 5000, random(seed)), published);
    fairPValues.push(fair?.pValue as number);
    const bent = chiSquareFit(draw(rigged, 5000, random(seed + 1000)), published);
    t.ok((bent?.pValue as number) < 1e-6, `rigged sample ${seed}: p = ${bent?.pValue}`);
  }
  // Under fairness p is uniform: 20 samples, none below 0.001, and not all high.
  t.ok(Math.min(...fairPValues) > 0.001, `fair samples: lowest p = ${Math.min(...fairPValues)}`);
  t.ok(
    fairPValues.some((p) => p < 0.5),
    'fair p-values spread over (0, 1)',
  );
});

t.test('the fit test on edge cases', async (t) => {
  const exact = chiSquareFit([50, 30, 20], [5, 3, 2]);
  t.match(exact, { draws: 100, categories: 3, statistic: 0, degreesOfFreedom: 2, pValue: 1, minExpected: 20 });
  t.equal(chiSquareFit([0, 0], [1, 1]), undefined, 'no draws: nothing to test');
  t.equal(chiSquareFit([4], [1]), undefined, 'one category: nothing to test');
  const impossible = chiSquareFit([5, 5, 1], [1, 1, 0]);
  t.match(impossible, { statistic: null, pValue: 0, categories: 2 }, 'a copy where the odds give no chance');
  t.equal(chiSquareFit([1, 0], [1, 1])?.minExpected, 0.5, 'minExpected says when counts are too small');
  // A textbook example: a die rolled 60 times (5, 8, 9, 8, 10, 20): chi-square 13.4, 5 df, p = 0.0199.
  const die = chiSquareFit([5, 8, 9, 8, 10, 20], [1, 1, 1, 1, 1, 1]);
  t.ok(close(die?.statistic as number, 13.4, 1e-9), 'the die statistic');
  t.ok(close(die?.pValue as number, 0.019905, 1e-5), `the die p-value ${die?.pValue}`);
  t.throws(() => chiSquareFit([1, 2], [1]), RangeError);
  t.throws(() => chiSquareFit([-1, 2], [1, 1]), RangeError);
});
