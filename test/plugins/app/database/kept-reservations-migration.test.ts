import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import t from 'tap';
import { MIGRATIONS_FOLDER } from '../../../../plugins/app/database/paths.js';
import { databaseUrl, readSuiteDatabase, withClient } from '../../../support/test-database.js';

/**
 * Migration 0015 gives packs their kept count of reservations. On a database that already holds
 * purchases, it marks the reservations already past their expiry as expired (they held nothing),
 * counts the pending ones on their packs, and only then adds the check that the count stays
 * within the supply: applied here on a database migrated to 0014 and filled with every kind of
 * purchase.
 */

const KEPT_COUNT = '0015_kept_reservations';

/** A copy of the migrations that stops before `tag`. */
function migrationsBefore(tag: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'pack-migrations-'));
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((entry) => entry.tag === tag);
  if (at < 0) throw new Error(`no migration ${tag}`);
  writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }));
  return folder;
}

t.test('0015 counts the pending reservations of each pack, after marking the lapsed ones expired', async (t) => {
  const { serverUrl } = readSuiteDatabase();
  const name = `pack_migration_${randomBytes(4).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`create database "${name}"`));
  const before = migrationsBefore(KEPT_COUNT);
  const client = new pg.Client({ connectionString: databaseUrl(serverUrl, name) });
  await client.connect();
  t.teardown(async () => {
    await client.end();
    rmSync(before, { recursive: true, force: true });
    await withClient(serverUrl, (admin) => admin.query(`drop database if exists "${name}" with (force)`));
  });

  await migrate(drizzle({ client }), { migrationsFolder: before });
  const columns = await client.query(
    `select 1 from information_schema.columns where table_name = 'packs' and column_name = 'reserved'`,
  );
  t.equal(columns.rowCount, 0, 'migrated to the step before: no kept count yet');

  const seed = 'a'.repeat(64);
  await client.query(`insert into users (id, display_name) values ('fan-1', 'Fan 1'), ('fan-2', 'Fan 2')`);
  await client.query(`
    insert into packs (id, name, status, price, cards_per_pack, supply, sold) values
      ('busy', 'Busy', 'active', 0, 1, 4, 1),
      ('lapsed', 'All lapsed', 'active', 0, 1, 2, 0),
      ('quiet', 'Quiet', 'active', 0, 1, null, 0)`);
  const purchase = (id: string, packId: string, status: string, expires: string, completed = false) =>
    client.query(
      `insert into purchases (id, user_id, pack_id, status, price, server_seed, server_seed_hash, expires_at, completed_at)
       values ($1, 'fan-1', $2, $3, 0, $4, $4, now() + $5::interval, ${completed ? 'now()' : 'null'})`,
      [id, packId, status, seed, expires],
    );
  // busy: one sold, two live reservations, one lapsed, one cancelled. With the lapsed one
  // counted, sold + reserved (4) would still fit its supply of 4; it must not be counted.
  await purchase('busy-sold', 'busy', 'completed', '10 minutes', true);
  await purchase('busy-live-1', 'busy', 'pending', '10 minutes');
  await purchase('busy-live-2', 'busy', 'pending', '10 minutes');
  await purchase('busy-lapsed', 'busy', 'pending', '-1 minute');
  await purchase('busy-cancelled', 'busy', 'cancelled', '10 minutes');
  // lapsed: its supply of 2 is held by three lapsed reservations and nothing live (made when
  // they did not count): counted, they would break the new check.
  for (const n of [1, 2, 3]) await purchase(`lapsed-${n}`, 'lapsed', 'pending', '-1 minute');

  await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS_FOLDER });

  const packs = await client.query<{ id: string; reserved: number }>('select id, reserved from packs order by id');
  t.same(packs.rows, [
    { id: 'busy', reserved: 2 },
    { id: 'lapsed', reserved: 0 },
    { id: 'quiet', reserved: 0 },
  ]);
  const statuses = await client.query<{ id: string; status: string; ended: boolean }>(
    'select id, status, ended_at is not null as ended from purchases order by id',
  );
  t.same(
    statuses.rows.map((row) => `${row.id} ${row.status}${row.ended ? ' (ended)' : ''}`),
    [
      'busy-cancelled cancelled',
      'busy-lapsed expired (ended)',
      'busy-live-1 pending',
      'busy-live-2 pending',
      'busy-sold completed',
      'lapsed-1 expired (ended)',
      'lapsed-2 expired (ended)',
      'lapsed-3 expired (ended)',
    ],
  );
  const refused = await client
    .query(`update packs set reserved = 4 where id = 'busy'`)
    .catch((error: { code?: string }) => error);
  t.equal(
    (refused as { code?: string }).code,
    '23514',
    'the check is in place: sold + reserved may not pass the supply',
  );
});
