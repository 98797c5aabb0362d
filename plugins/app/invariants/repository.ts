import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../db.js';

/**
 * The economy's invariants, checked by reading the database: for tests after every change of
 * money-like state, and for benchmarks and operators after a run.
 */

const rows = async <T>(db: Database, query: SQL): Promise<T[]> => ((await db.execute(query)) as unknown as { rows: T[] }).rows;

/**
 * Every invariant of the economy that the database can be asked about, as a list of violations
 * (empty when all hold): balances equal their ledgers and are never negative; serials unique,
 * within 1..editionSize and counted by minted; remaining + drawn = the copies each serial state
 * covers; no pack sold past its supply or opened more than once.
 */
export async function findEconomyViolations(db: Database): Promise<string[]> {
  const problems: string[] = [];
  const found = async (what: string, query: SQL) => {
    for (const row of await rows<Record<string, unknown>>(db, query)) problems.push(`${what}: ${JSON.stringify(row)}`);
  };
  await found(
    'balance differs from the sum of its ledger',
    sql`select w.user_id, w.balance, coalesce(sum(l.amount), 0)::int as ledger from wallets w left join wallet_ledger l on l.user_id = w.user_id group by w.user_id, w.balance having w.balance <> coalesce(sum(l.amount), 0) or w.balance < 0`,
  );
  await found('serial outside 1..editionSize', sql`select p.id, p.serial_number, c.edition_size from pulls p join collectibles c on c.id = p.collectible_id where p.serial_number < 1 or p.serial_number > c.edition_size`);
  await found('serial given twice', sql`select collectible_id, serial_number, count(*) from pulls group by 1, 2 having count(*) > 1`);
  await found(
    'minted differs from the pulls',
    sql`select c.id, c.minted, (select count(*) from pulls p where p.collectible_id = c.id)::int as pulled from collectibles c where c.minted <> (select count(*) from pulls p where p.collectible_id = c.id)`,
  );
  await found(
    'serial state differs from the pulls',
    sql`select s.pack_id, s.collectible_id, s.minted, (select count(*) from pulls p where p.pack_id = s.pack_id and p.collectible_id = s.collectible_id)::int as pulled from serial_states s where s.minted <> (select count(*) from pulls p where p.pack_id = s.pack_id and p.collectible_id = s.collectible_id)`,
  );
  await found(
    'an active entry has copies without serials (remaining + minted > allocated)',
    sql`select e.pack_id, e.collectible_id, e.remaining, s.minted, s.allocated from pack_pool_entries e join packs k on k.id = e.pack_id left join serial_states s on s.pack_id = e.pack_id and s.collectible_id = e.collectible_id where k.status = 'active' and e.remaining + coalesce(s.minted, 0) > coalesce(s.allocated, 0)`,
  );
  await found(
    'the pool cannot fill the packs sold unopened (and, on sale, reserved)',
    sql`select k.id, k.status, k.sold, k.opened, k.cards_per_pack,
               coalesce((select sum(e.remaining) from pack_pool_entries e where e.pack_id = k.id), 0)::int as remaining,
               (select count(*) from purchases p where p.pack_id = k.id and p.status = 'pending' and p.expires_at > now())::int as reserved
        from packs k
        where coalesce((select sum(e.remaining) from pack_pool_entries e where e.pack_id = k.id), 0)
              < (k.sold - k.opened + case when k.status = 'active'
                   then (select count(*) from purchases p where p.pack_id = k.id and p.status = 'pending' and p.expires_at > now()) else 0 end) * k.cards_per_pack`,
  );
  await found('pack sold past its supply', sql`select id, sold, supply from packs where supply is not null and sold > supply`);
  await found('sold differs from completed purchases', sql`select k.id, k.sold, (select count(*) from purchases p where p.pack_id = k.id and p.status = 'completed')::int as completed from packs k where k.sold <> (select count(*) from purchases p where p.pack_id = k.id and p.status = 'completed')`);
  await found('opened differs from opened packs', sql`select k.id, k.opened, (select count(*) from user_packs u where u.pack_id = k.id and u.opened_at is not null)::int as opened_packs from packs k where k.opened <> (select count(*) from user_packs u where u.pack_id = k.id and u.opened_at is not null)`);
  await found('owned pack without a completed purchase', sql`select u.id from user_packs u join purchases p on p.id = u.purchase_id where p.status <> 'completed'`);
  await found('opened pack with the wrong number of pulls', sql`select u.id, k.cards_per_pack, (select count(*) from pulls p where p.user_pack_id = u.id)::int as pulls from user_packs u join packs k on k.id = u.pack_id where u.opened_at is not null and (select count(*) from pulls p where p.user_pack_id = u.id) <> k.cards_per_pack`);
  return problems;
}
