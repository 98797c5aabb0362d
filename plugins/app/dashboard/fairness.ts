/**
 * The fairness check of a pack's draws: Pearson's chi-square goodness-of-fit test of the copies
 * observed per category (collectible or rarity) against the shares the published pool promises.
 * Pure functions; docs/dashboard.md explains how to read the p-value and when not to.
 */

export interface FitTest {
  /** Draws tested (the sum of the observed counts). */
  draws: number;
  /** Categories with a positive expected share. */
  categories: number;
  /** null when a copy fell in a category the odds give no chance (p-value 0). */
  statistic: number | null;
  degreesOfFreedom: number;
  /**
   * The chance that a fair draw strays at least this far from the expected counts. Small values
   * (below 0.01, say) are evidence against the published odds; large values are not proof of fairness.
   */
  pValue: number;
  /** The smallest expected count: below 5, the chi-square approximation is rough (see docs). */
  minExpected: number;
}

/**
 * Tests `observed[i]` copies against shares `expected[i]` (any non-negative weights; normalized
 * here). Undefined when there is nothing to test: no draws, or fewer than two possible categories.
 * A copy observed in a category whose share is 0 cannot happen under the odds: p-value 0.
 */
export function chiSquareFit(observed: readonly number[], expected: readonly number[]): FitTest | undefined {
  if (observed.length !== expected.length) throw new RangeError('observed and expected counts differ in length');
  for (const [index, count] of observed.entries()) {
    const share = expected[index] as number;
    if (!Number.isFinite(count) || count < 0 || !Number.isFinite(share) || share < 0)
      throw new RangeError('counts and shares are finite and not negative');
  }
  const draws = observed.reduce((sum, count) => sum + count, 0);
  const total = expected.reduce((sum, share) => sum + share, 0);
  const possible = expected.filter((share) => share > 0).length;
  if (draws === 0 || total === 0 || possible < 2) return undefined;
  let statistic = 0;
  let minExpected = Number.POSITIVE_INFINITY;
  let impossible = false;
  for (const [index, count] of observed.entries()) {
    const share = expected[index] as number;
    if (share === 0) {
      if (count > 0) impossible = true;
      continue;
    }
    const expectedCount = (draws * share) / total;
    minExpected = Math.min(minExpected, expectedCount);
    statistic += (count - expectedCount) ** 2 / expectedCount;
  }
  const degreesOfFreedom = possible - 1;
  return {
    draws,
    categories: possible,
    statistic: impossible ? null : statistic,
    degreesOfFreedom,
    pValue: impossible ? 0 : chiSquareSurvival(statistic, degreesOfFreedom),
    minExpected,
  };
}

/** P(X >= x) for X chi-square distributed with k degrees of freedom: Q(k/2, x/2). */
export function chiSquareSurvival(x: number, k: number): number {
  if (!(k > 0) || Number.isNaN(x)) throw new RangeError('the degrees of freedom are positive and x is a number');
  if (x <= 0) return 1;
  if (x === Number.POSITIVE_INFINITY) return 0;
  return regularizedUpperGamma(k / 2, x / 2);
}

const EPSILON = 1e-15;
const TINY = 1e-300;
const MAX_ITERATIONS = 10_000;

/**
 * Q(a, x) = Γ(a, x) / Γ(a), the regularized upper incomplete gamma function, for a > 0, x >= 0:
 * the power series of P = 1 - Q below x < a + 1, where it converges fast, and the continued
 * fraction of Q (modified Lentz) above, where the series would lose the small tail to
 * cancellation. Both as in Numerical Recipes (3rd ed., 6.2).
 */
export function regularizedUpperGamma(a: number, x: number): number {
  if (!(a > 0) || !(x >= 0)) throw new RangeError('a > 0 and x >= 0');
  if (x === 0) return 1;
  const logPrefix = -x + a * Math.log(x) - logGamma(a);
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < MAX_ITERATIONS; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPSILON) break;
    }
    return Math.min(1, Math.max(0, 1 - sum * Math.exp(logPrefix)));
  }
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let fraction = d;
  for (let n = 1; n < MAX_ITERATIONS; n++) {
    const an = -n * (n - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const step = d * c;
    fraction *= step;
    if (Math.abs(step - 1) < EPSILON) break;
  }
  return Math.min(1, Math.max(0, Math.exp(logPrefix) * fraction));
}

/** Lanczos coefficients (g = 7, n = 9): ln Γ to about 15 significant digits for positive arguments. */
const LANCZOS = [
  0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531, -176.6150291621406, 12.507343278686905,
  -0.13857109526572012, 9.984369578019572e-6, 1.5056327351493116e-7,
];

/** ln Γ(z) for z > 0 (the reflection formula below 1/2). */
export function logGamma(z: number): number {
  if (!(z > 0)) throw new RangeError('z > 0');
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - logGamma(1 - z);
  const shifted = z - 1;
  let sum = LANCZOS[0] as number;
  for (let i = 1; i < LANCZOS.length; i++) sum += (LANCZOS[i] as number) / (shifted + i);
  const t = shifted + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (shifted + 0.5) * Math.log(t) - t + Math.log(sum);
}
