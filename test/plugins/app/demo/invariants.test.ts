import t from 'tap';
import { checkInvariants } from '../../../../plugins/app/invariants/checker.js';
import { buildTestApp, createTestDatabase } from '../../../support/app.js';
import { runScript } from '../../../support/scripts.js';

/**
 * The demo catalog is made as an admin would make it (through the services: audited, serials
 * allocated on publish), so a fresh demo database holds every invariant, as the checker sees it
 * in-process and as `npm run check-invariants` reports it.
 */

t.test('a fresh demo database holds every invariant', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const app = await buildTestApp(t, { DATABASE_URL: database.url, DEMO_DATA: 'true' });

  const active = (await app.inject({ url: '/api/packs' })).json().packs as unknown[];
  t.equal(active.length, 4, 'the demo is loaded');

  const results = await app.db.transaction((tx) => checkInvariants(tx));
  t.ok(results.length > 0);
  for (const result of results) t.same(result.violations, [], result.name);

  const script = await runScript('check-invariants', database.url);
  t.equal(script.code, 0, script.stdout + script.stderr);
  t.match(script.stdout, /(\d+) of \1 invariants hold/);
});
