import { MAX_BUNDLE_COINS } from '../../../schemas/products.js';
import { ValidationError } from '../errors.js';

/** Pure rules of coin bundles. */

/** What one order of the bundle grants: its coins and its bonus, within one bundle's limit. */
export function bundleCoins(coins: number, bonusCoins: number): number {
  const total = coins + bonusCoins;
  if (total > MAX_BUNDLE_COINS) {
    throw new ValidationError(
      `A bundle grants at most ${MAX_BUNDLE_COINS} coins (coins + bonusCoins); this one would grant ${total}.`,
      [{ path: '/bonusCoins', message: `coins + bonusCoins must be at most ${MAX_BUNDLE_COINS}` }],
    );
  }
  return total;
}
