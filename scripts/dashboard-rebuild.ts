import { rebuildRollups } from '../plugins/app/dashboard/rollups.js';
import { withServiceDatabase } from './service-database.js';

/**
 * Recomputes the dashboard's rollups from the whole event log:
 *   npm run dashboard-rebuild
 * In one transaction (dashboards keep answering from the old sums until it commits), under the
 * lock the event consumer takes, so it is safe beside a running service and running it twice
 * gives the same sums. Exits 0, or 2 when the database cannot be used.
 */

await withServiceDatabase('dashboard-rebuild', async (orm, where) => {
  const started = performance.now();
  const added = await rebuildRollups(orm);
  console.log(
    `Rebuilt the dashboard rollups of ${where} from ${added} event(s) in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
  );
  return 0;
});
