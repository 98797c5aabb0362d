/** Pearson's chi-square statistic of observed counts against expected ones. */
export function chiSquare(observed: readonly number[], expected: readonly number[]): number {
  return observed.reduce((sum, count, index) => {
    const wanted = expected[index] as number;
    return sum + (count - wanted) ** 2 / wanted;
  }, 0);
}

/** The standard normal's quantiles for the levels the tests use. */
const NORMAL_QUANTILE = { 0.001: 3.090232, 0.000001: 4.753424 } as const;

/**
 * The chi-square value a fair sample exceeds with probability `level` (0.001 by default), for `df`
 * degrees of freedom (Wilson–Hilferty's approximation, within 2% of the tables for df >= 3).
 */
export function chiSquareCritical(df: number, level: keyof typeof NORMAL_QUANTILE = 0.001): number {
  const z = NORMAL_QUANTILE[level];
  return df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
}
