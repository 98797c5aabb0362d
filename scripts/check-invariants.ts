import { checkInvariants, type InvariantResult } from '../plugins/app/invariants/checker.js';
import { withServiceDatabase } from './service-database.js';

/**
 * Checks every invariant of the money-like state and prints a report:
 *   npm run check-invariants            the database the service uses (DATABASE_URL, or the embedded one in DATA_DIR)
 *   npm run check-invariants -- --json  the same as JSON
 * Reads only, in one read-only snapshot, so it is safe beside a running service. Exits 0 when
 * every invariant holds, 1 when one does not, 2 when the database cannot be read.
 */

const json = process.argv.includes('--json');

function print(results: InvariantResult[], where: string, totalMs: number): void {
  console.log(`Invariants of ${where}:\n`);
  for (const result of results) {
    const status = result.violations.length === 0 ? 'ok  ' : 'FAIL';
    console.log(`  ${status}  ${result.name} (${Math.round(result.ms)} ms)`);
    for (const violation of result.violations) console.log(`          - ${violation}`);
  }
  const held = results.filter((result) => result.violations.length === 0).length;
  console.log(`\n${held} of ${results.length} invariants hold (${(totalMs / 1000).toFixed(1)} s).`);
}

await withServiceDatabase('check-invariants', async (orm, where) => {
  const started = performance.now();
  // One snapshot for every check: a service writing meanwhile cannot make two checks disagree.
  const results = await orm.transaction((tx) => checkInvariants(tx), {
    isolationLevel: 'repeatable read',
    accessMode: 'read only',
  });
  const totalMs = performance.now() - started;
  if (json) console.log(JSON.stringify({ where, ms: Math.round(totalMs), results }, null, 2));
  else print(results, where, totalMs);
  return results.every((result) => result.violations.length === 0) ? 0 : 1;
});
