import pg from 'pg';
import t from 'tap';
import { runScript } from '../support/scripts.js';
import { createTestDatabase } from '../support/test-database.js';

/** `npm run dashboard-rebuild` as an operator runs it: the rollups recomputed from the log, the same each time. */

t.test('dashboard-rebuild: rollups from the whole log, idempotent; 2 when it cannot reach the database', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  t.teardown(() => client.end());
  await client.query(`
    insert into events (type, occurred_at, user_id, team_id, subject, data) values
      ('purchase.completed', '2026-03-29T01:10:00Z', 'fan-1', 'team-1', 'p1', '{"purchaseId":"p1","packId":"k1","price":10}'),
      ('purchase.completed', '2026-03-29T01:40:00Z', 'fan-2', 'team-1', 'p2', '{"purchaseId":"p2","packId":"k1","price":10}'),
      ('wallet.credited', '2026-03-29T01:00:00Z', 'fan-1', null, 'e1', '{"entryId":"e1","amount":5,"balanceAfter":5,"kind":"adjustment","reference":null}')`);
  // A sum left wrong, as a bug could leave it: the rebuild replaces it.
  await client.query(
    `insert into dashboard_hours (team_id, hour, pack_id, packs_sold) values ('team-1', '2026-03-29T01:00:00Z', 'k1', 99)`,
  );
  const rollups = async () =>
    (
      await client.query(
        'select team_id, hour, pack_id, packs_sold::int, coins_taken::int from dashboard_hours order by team_id, hour, pack_id collate "C"',
      )
    ).rows;
  for (const run of [1, 2]) {
    const result = await runScript('dashboard-rebuild', database.url);
    t.equal(result.code, 0, result.stderr);
    t.match(result.stdout, /from 2 event\(s\)/, `run ${run}: the two purchases, not the wallet event`);
    t.same(await rollups(), [
      { team_id: 'team-1', hour: new Date('2026-03-29T01:00:00Z'), pack_id: '*', packs_sold: 2, coins_taken: 20 },
      { team_id: 'team-1', hour: new Date('2026-03-29T01:00:00Z'), pack_id: 'k1', packs_sold: 2, coins_taken: 20 },
    ]);
    t.equal((await client.query('select count(*)::int as n from dashboard_counted')).rows[0].n, 2);
  }
  const unreachable = await runScript('dashboard-rebuild', 'postgres://postgres@127.0.0.1:1/nothing');
  t.equal(unreachable.code, 2);
});
