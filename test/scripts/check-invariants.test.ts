import pg from 'pg';
import t from 'tap';
import { runScript } from '../support/scripts.js';
import { createTestDatabase } from '../support/test-database.js';

/** `npm run check-invariants` as an operator runs it: its report and its exit code. */

const checkInvariants = (databaseUrl: string, ...args: string[]) => runScript('check-invariants', databaseUrl, ...args);

t.test('check-invariants: 0 when all hold, 1 with the broken one named, 2 when it cannot read', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());

  const clean = await checkInvariants(database.url);
  t.equal(clean.code, 0, clean.stderr);
  t.match(clean.stdout, /(\d+) of \1 invariants hold/);

  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    // A balance with no ledger behind it, as only a hand edit could make (foreign keys and triggers off).
    await client.query('begin');
    await client.query('set local session_replication_role = replica');
    await client.query(`insert into wallets (user_id, balance, last_seq, updated_at) values ('someone', 5, 1, now())`);
    await client.query('commit');
  } finally {
    await client.end();
  }
  const broken = await checkInvariants(database.url);
  t.equal(broken.code, 1);
  t.match(broken.stdout, /FAIL {2}every balance equals the sum of its ledger/);
  t.match(broken.stdout, /"user_id":"someone","balance":5/);
  const json = await checkInvariants(database.url, '--json');
  t.equal(json.code, 1);
  const report = JSON.parse(json.stdout) as { results: { name: string; violations: string[] }[] };
  t.same(
    report.results.filter((result) => result.violations.length > 0).map((result) => result.name),
    ['every balance equals the sum of its ledger and is not negative'],
  );

  const unreachable = await checkInvariants('postgres://postgres@127.0.0.1:1/nothing');
  t.equal(unreachable.code, 2);
  t.match(unreachable.stderr, /check-invariants cannot use the database/);
});
