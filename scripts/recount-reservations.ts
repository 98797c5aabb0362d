import { recountReservations } from '../plugins/app/purchases/maintenance.js';
import { withServiceDatabase } from './service-database.js';

/**
 * Each pack keeps the count of its pending purchases, which its sales decide by. A release that
 * did not keep it (before migration 0015) leaves it wrong if it ran on the database since:
 *   npm run recount-reservations               recounts every pack (after reclaiming expired reservations)
 *   npm run recount-reservations -- --release  sets every count to 0: before starting such a release here
 * One pack at a time, each under its row lock, so it is safe beside a running service. Prints the
 * packs whose count changed; exits 0, or 2 when the database cannot be used.
 */

const release = process.argv.includes('--release');
const unknown = process.argv.slice(2).filter((arg) => arg !== '--release');
if (unknown.length > 0) {
  console.error(`usage: npm run recount-reservations [-- --release]   (unknown: ${unknown.join(' ')})`);
  process.exit(2);
}

await withServiceDatabase('recount-reservations', async (orm, where) => {
  const corrected = await recountReservations(orm, { release });
  for (const pack of corrected) console.log(`  pack ${pack.packId}: ${pack.was} -> ${pack.now}`);
  console.log(
    `${release ? 'Released' : 'Recounted'} the reservations of ${where}: ${corrected.length} pack(s) changed.`,
  );
  return 0;
});
