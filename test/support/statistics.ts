/** Pearson's chi-square statistic of observed counts against expected ones. */
export function chiSquare(observed: readonly number[], expected: readonly number[]): number {
  return observed.reduce((sum, count, index) => {
    const wanted = expected[index] as number;
    return sum + (count - wanted) ** 2 / wanted;
  }, 0);
}

/**
 * The chi-square value a fair sample exceeds with probability 0.001, for `df` degrees of freedom
 * (Wilson–Hilferty's approximation, within 2% of the tables for df >= 3).
 */
export function chiSquareCritical(df: number): number {
  const z = 3.090232; // the standard normal's 0.999 quantile
  return df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
}
