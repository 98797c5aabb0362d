import pg from 'pg';
import t from 'tap';
import { buildTestApp } from '../support/app.js';
import { packInStatus } from '../support/catalog.js';
import { economyViolations, signIn, startPurchase } from '../support/economy.js';
import { runScript } from '../support/scripts.js';
import { createTestDatabase } from '../support/test-database.js';

/**
 * `npm run recount-reservations` as an operator runs it: after a release that did not keep the
 * packs' counts of reservations, it sets each to its pending purchases; `--release` sets them to 0
 * for such a release; on a database the service kept, it changes nothing.
 */

const recount = (databaseUrl: string, ...args: string[]) => runScript('recount-reservations', databaseUrl, ...args);

t.test('recount-reservations: nothing to change, then a wrong count set right, then released', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const app = await buildTestApp(t, { DATABASE_URL: database.url });
  const { pack } = await packInStatus(app, 'active', {
    pack: { price: 0, cardsPerPack: 1, supply: 10 },
    pool: [{ quantity: 10 }],
  });
  const fan = await signIn(app, 'recount-fan');
  for (let i = 0; i < 3; i++) t.equal((await startPurchase(app, fan, pack.id)).statusCode, 201);

  const kept = await recount(database.url);
  t.equal(kept.code, 0, kept.stderr);
  t.match(kept.stdout, /0 pack\(s\) changed/, 'a count the service kept is right already');

  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  t.teardown(() => client.end());
  // As a release that did not keep the count leaves it: one reservation it made, one it completed.
  await client.query(`update packs set reserved = 1 where id = $1`, [pack.id]);
  const lapsed = (await client.query(`select id from purchases where pack_id = $1 limit 1`, [pack.id])).rows[0]?.id;
  await client.query(`update purchases set expires_at = now() - interval '1 minute' where id = $1`, [lapsed]);
  t.notSame(await economyViolations(app), [], 'the checker reports the wrong count');

  const fixed = await recount(database.url);
  t.equal(fixed.code, 0, fixed.stderr);
  // The lapsed reservation is reclaimed first (taking the wrong 1 to 0), then the two live ones counted.
  t.match(
    fixed.stdout,
    new RegExp(`pack ${pack.id}: 0 -> 2`),
    'the lapsed reservation reclaimed, the two live ones counted',
  );
  const [row] = (await client.query(`select reserved from packs where id = $1`, [pack.id])).rows;
  t.equal(row?.reserved, 2);
  t.same(await economyViolations(app), [], 'every invariant holds again');

  const released = await recount(database.url, '--release');
  t.equal(released.code, 0, released.stderr);
  t.match(released.stdout, new RegExp(`pack ${pack.id}: 2 -> 0`));

  const wrong = await recount(database.url, '--everything');
  t.equal(wrong.code, 2, 'an unknown option');
  t.match(wrong.stderr, /usage: npm run recount-reservations/);
});
