import type { Database } from '../database/index.js';
import { recountReservations as recount } from './reservations-repository.js';

/**
 * What an operator runs on the purchases (scripts/recount-reservations.ts), without the service:
 * sets each pack's kept count of pending purchases to the truth, pack by pack under its row lock,
 * and answers the packs whose count was wrong. With `release`, sets every count to 0 instead.
 */
export function recountReservations(
  db: Database,
  options: { release?: boolean } = {},
): Promise<{ packId: string; was: number; now: number }[]> {
  return recount(db, options);
}
