import { sql } from 'drizzle-orm';
import { type DrawProof, verifyDrawProof } from '../packs/draw.js';
import type { Database } from '../database/index.js';
import { EXAMPLES, type Invariant, rows, violations } from './queries.js';
import { LEAGUE_INVARIANTS } from './leagues.js';
import { QUEST_INVARIANTS } from './quests.js';
import { LEADERBOARD_INVARIANTS } from './leaderboards.js';
import { REWARD_INVARIANTS } from './rewards.js';
import { DASHBOARD_INVARIANTS } from './dashboard.js';

/**
 * The invariants of the service's money-like state, checked by reading the database: for tests
 * after every change of it, for benchmarks after a run, and for operators
 * (`npm run check-invariants`). Each check answers its violations (empty when it holds), at most
 * `EXAMPLES` of them, so a broken database is reported quickly and readably.
 */

/** Order statuses whose coins were credited: each has exactly one top-up. */
const CREDITED = sql.raw(`('fulfilled', 'refunded', 'disputed')`);

export type { Invariant };

export const INVARIANTS: Invariant[] = [
  {
    name: 'every balance equals the sum of its ledger and is not negative',
    check: violations(
      sql`select w.user_id, w.balance, coalesce(sum(l.amount), 0)::bigint as ledger from wallets w left join wallet_ledger l on l.user_id = w.user_id
          group by w.user_id, w.balance having w.balance <> coalesce(sum(l.amount), 0) or w.balance < 0`,
    ),
  },
  {
    name: 'every credited order has exactly one top-up, of its coins, to its buyer',
    check: violations(
      sql`select o.id, o.status, o.coins, count(l.id)::int as topups, coalesce(sum(l.amount), 0)::int as credited
          from orders o left join wallet_ledger l on l.kind = 'topup' and l.reference = o.id and l.user_id = o.user_id
          where o.status in ${CREDITED} group by o.id having count(l.id) <> 1 or coalesce(sum(l.amount), 0) <> o.coins`,
    ),
  },
  {
    name: 'no top-up without a credited order',
    check: violations(
      sql`select l.id, l.user_id, l.reference, o.status from wallet_ledger l left join orders o on o.id = l.reference
          where l.kind = 'topup' and (o.id is null or o.status not in ${CREDITED} or o.user_id <> l.user_id)`,
    ),
  },
  {
    name: "an order's refunds and disputes took back coinsReversed - uncollected, within its coins",
    check: violations(
      sql`select o.id, o.status, o.coins, o.coins_reversed, o.uncollected, coalesce(-sum(l.amount), 0)::int as taken
          from orders o left join wallet_ledger l on l.reference = o.id and l.kind in ('refund', 'adjustment')
          group by o.id
          having coalesce(-sum(l.amount), 0) <> o.coins_reversed - o.uncollected
              or not (0 <= o.uncollected and o.uncollected <= o.coins_reversed and o.coins_reversed <= o.coins)`,
    ),
  },
  {
    // A store refunds a consumable whole: its refund reverses every coin (taken back or uncollected).
    name: 'a refunded store order reversed all its coins',
    check: violations(
      sql`select id, provider, coins, coins_reversed from orders
          where provider <> 'stripe' and status = 'refunded' and coins_reversed <> coins`,
    ),
  },
  {
    name: 'serial numbers are within 1..editionSize',
    check: violations(
      sql`select p.id, p.serial_number, c.edition_size from pulls p join collectibles c on c.id = p.collectible_id where p.serial_number < 1 or p.serial_number > c.edition_size`,
    ),
  },
  {
    name: 'no serial number is given twice',
    check: violations(
      sql`select collectible_id, serial_number, count(*)::int from pulls group by 1, 2 having count(*) > 1`,
    ),
  },
  {
    name: "a collectible's minted count is its pulls",
    check: violations(
      sql`select c.id, c.minted, coalesce(p.pulled, 0)::int as pulled from collectibles c
          left join (select collectible_id, count(*) as pulled from pulls group by 1) p on p.collectible_id = c.id
          where c.minted <> coalesce(p.pulled, 0)`,
    ),
  },
  {
    name: "a pool entry's serial state counts its pulls, and its blocks hold what it allocated",
    check: violations(
      sql`select s.pack_id, s.collectible_id, s.minted, coalesce(p.pulled, 0)::int as pulled, s.allocated, coalesce(b.blocked, 0)::int as in_blocks
          from serial_states s
          left join (select pack_id, collectible_id, count(*) as pulled from pulls group by 1, 2) p on p.pack_id = s.pack_id and p.collectible_id = s.collectible_id
          left join (select pack_id, collectible_id, sum(count) as blocked from serial_blocks group by 1, 2) b on b.pack_id = s.pack_id and b.collectible_id = s.collectible_id
          where s.minted <> coalesce(p.pulled, 0) or s.allocated <> coalesce(b.blocked, 0)`,
    ),
  },
  {
    name: 'an active entry has a serial for every copy left',
    check: violations(
      sql`select e.pack_id, e.collectible_id, e.remaining, s.minted, s.allocated from pack_pool_entries e join packs k on k.id = e.pack_id
          left join serial_states s on s.pack_id = e.pack_id and s.collectible_id = e.collectible_id
          where k.status = 'active' and e.remaining + coalesce(s.minted, 0) > coalesce(s.allocated, 0)`,
    ),
  },
  {
    // Copies leave a pool only by being drawn: what its last audited change left, less the pulls since.
    name: "a pool entry's copies left plus those drawn since its last audited change equal what that change left",
    check: violations(
      // Each entry finds its last change through the audit log's (target, time) index, so the
      // planner knows there is one row per entry and counts the pulls in a single join. Joined
      // the other way round, with estimates from JSON fields, it scanned a collectible's pulls
      // once per entry: 1.5 to 2.5 s on 100,000 pulls instead of 0.1 to 0.3 s.
      sql`with entries as (
            select e.pack_id, e.collectible_id, e.remaining, c.left_then, c.at
            from pack_pool_entries e
            left join lateral (
              select (a.after->>'remaining')::int as left_then, a.created_at as at from audit_log a
              where a.target_id = e.pack_id and a.action = 'pack.addCollectible'
                and a.after->>'collectibleId' = e.collectible_id and a.after ? 'remaining'
              order by a.created_at desc, a.id desc limit 1) c on true),
          drawn as (
            select e.pack_id, e.collectible_id, count(*)::int as since
            from entries e join pulls p on p.pack_id = e.pack_id and p.collectible_id = e.collectible_id and p.created_at >= e.at
            group by e.pack_id, e.collectible_id)
          select e.pack_id, e.collectible_id, e.remaining, e.left_then, coalesce(d.since, 0) as drawn_since
          from entries e left join drawn d on d.pack_id = e.pack_id and d.collectible_id = e.collectible_id
          where e.at is null or e.remaining + coalesce(d.since, 0) <> e.left_then`,
    ),
  },
  {
    name: 'the pool can fill the packs sold or granted unopened, those promised to rewards (and, on sale, reserved)',
    check: violations(
      // Against the kept count: a pending reservation holds its copies until it is reclaimed.
      sql`select k.id, k.status, k.sold, k.granted, k.opened, k.cards_per_pack, coalesce(e.remaining, 0)::int as remaining, k.reserved, k.promised
          from packs k
          left join (select pack_id, sum(remaining) as remaining from pack_pool_entries group by 1) e on e.pack_id = k.id
          where coalesce(e.remaining, 0) < (k.sold + k.granted - k.opened + k.promised + case when k.status = 'active' then k.reserved else 0 end) * k.cards_per_pack`,
    ),
  },
  {
    name: 'no pack is sold or reserved past its supply (counting its granted and promised packs), and sold, granted and opened count its purchases, granted packs and opens',
    check: violations(
      sql`select k.id, k.supply, k.sold, k.granted, k.reserved, k.promised, coalesce(p.completed, 0)::int as completed,
                 coalesce(u.granted, 0)::int as granted_packs, k.opened, coalesce(u.opened, 0)::int as opened_packs
          from packs k
          left join (select pack_id, count(*) as completed from purchases where status = 'completed' group by 1) p on p.pack_id = k.id
          left join (select pack_id, count(*) filter (where opened_at is not null) as opened,
                            count(*) filter (where grant_id is not null and revoked_at is null) as granted
                     from user_packs group by 1) u on u.pack_id = k.id
          where (k.supply is not null and k.sold + k.granted + k.reserved + k.promised > k.supply) or k.sold <> coalesce(p.completed, 0)
             or k.granted <> coalesce(u.granted, 0) or k.opened <> coalesce(u.opened, 0)`,
    ),
  },
  {
    // The count a start decides by: every pending purchase, live or past its expiry and not yet reclaimed.
    name: "a pack's kept count of reservations equals its pending purchases",
    check: violations(
      sql`select k.id, k.reserved, coalesce(p.pending, 0)::int as pending
          from packs k left join (select pack_id, count(*) as pending from purchases where status = 'pending' group by 1) p on p.pack_id = k.id
          where k.reserved <> coalesce(p.pending, 0)`,
    ),
  },
  {
    // maxPerUser may be lowered in a draft after sales: each purchase is held to the limit in force
    // when it was made (the pack's audit rows record every value it had).
    name: 'no purchase took a user past the maxPerUser in force when it was made',
    check: violations(
      sql`with ranked as (
            select p.id, p.user_id, p.pack_id, p.created_at, row_number() over (partition by p.user_id, p.pack_id order by p.created_at, p.id) as nth
            from purchases p where p.status = 'completed')
          select r.id, r.user_id, r.pack_id, r.nth, m.max_per_user from ranked r
          cross join lateral (
            select (a.after->>'maxPerUser')::int as max_per_user from audit_log a
            where a.target_id = r.pack_id and a.target_type = 'pack' and a.after ? 'maxPerUser' and a.created_at <= r.created_at
            order by a.created_at desc, a.id desc limit 1) m
          where m.max_per_user is not null and r.nth > m.max_per_user`,
    ),
  },
  {
    name: 'every completed purchase of a priced pack was paid once, its price, by its buyer; every purchase debit is for one',
    check: violations(
      sql`select p.id, p.user_id, p.price, count(l.id)::int as debits, coalesce(sum(l.amount), 0)::int as paid
          from purchases p left join wallet_ledger l on l.kind = 'purchase' and l.reference = p.id and l.user_id = p.user_id
          where p.status = 'completed'
          group by p.id having count(l.id) <> (case when p.price > 0 then 1 else 0 end) or coalesce(sum(l.amount), 0) <> -p.price
          union all
          select l.reference, l.user_id, -l.amount, 1, l.amount from wallet_ledger l left join purchases p on p.id = l.reference
          where l.kind = 'purchase' and (p.id is null or p.status <> 'completed' or p.user_id <> l.user_id)`,
    ),
  },
  {
    name: "an owned pack is its purchase's buyer's, of its purchase's pack",
    check: violations(
      sql`select u.id, u.user_id, u.pack_id, p.user_id as buyer, p.pack_id as bought
          from user_packs u join purchases p on p.id = u.purchase_id where u.user_id <> p.user_id or u.pack_id <> p.pack_id`,
    ),
  },
  {
    name: 'every owned pack comes from a completed purchase or a grant, and an opened one holds cardsPerPack pulls and its stored result',
    check: violations(
      sql`select u.id, p.status as purchase, u.grant_id, k.cards_per_pack, coalesce(n.pulls, 0)::int as pulls, (o.user_pack_id is not null) as has_result, u.opened_at
          from user_packs u left join purchases p on p.id = u.purchase_id join packs k on k.id = u.pack_id
          left join (select user_pack_id, count(*) as pulls from pulls group by 1) n on n.user_pack_id = u.id
          left join pack_opens o on o.user_pack_id = u.id
          where (u.purchase_id is not null and p.status <> 'completed') or (u.purchase_id is null and u.grant_id is null)
             or (u.opened_at is not null and (coalesce(n.pulls, 0) <> k.cards_per_pack or o.user_pack_id is null))
             or (u.opened_at is null and (coalesce(n.pulls, 0) <> 0 or o.user_pack_id is not null))`,
    ),
  },
  {
    name: "every open's stored result is recomputable from its proof, with the owned pack's seed and the pulls given",
    check: checkOpenProofs,
  },
  {
    name: "every pack state change has its audit row, and a pack's status is its last audited one",
    check: violations(
      sql`with changes as (
            select target_id, id, created_at, before->>'status' as from_status, after->>'status' as to_status,
                   lag(after->>'status') over w as previous_status, lag(created_at) over w as previous_at,
                   row_number() over (partition by target_id order by created_at desc, id desc) as from_last
            from audit_log where target_type = 'pack' and after ? 'status'
            window w as (partition by target_id order by created_at, id))
          select k.id, k.status, c.to_status as last_audited from packs k left join changes c on c.target_id = k.id and c.from_last = 1
          where c.target_id is null or c.to_status <> k.status
          union all
          select c.target_id, c.from_status, c.previous_status from changes c
          where c.previous_at is not null and c.previous_at <> c.created_at and c.from_status is distinct from c.previous_status`,
    ),
  },
  ...REWARD_INVARIANTS,
  ...QUEST_INVARIANTS,
  ...LEAGUE_INVARIANTS,
  ...LEADERBOARD_INVARIANTS,
  ...DASHBOARD_INVARIANTS,
];

/** Opens are read in pages: a result holds its whole proof. */
const OPEN_PAGE = 500;

async function checkOpenProofs(db: Database): Promise<string[]> {
  const problems: string[] = [];
  let after = '';
  for (;;) {
    const page = await rows<{
      user_pack_id: string;
      result: { fairness?: DrawProof };
      server_seed: string;
      pulled: { collectibleId: string; serialNumber: number; drawIndex: number }[];
    }>(
      db,
      sql`select o.user_pack_id, o.result, coalesce(p.server_seed, u.server_seed) as server_seed,
                 (select coalesce(jsonb_agg(jsonb_build_object('collectibleId', l.collectible_id, 'serialNumber', l.serial_number, 'drawIndex', l.draw_index) order by l.draw_index), '[]')
                  from pulls l where l.user_pack_id = o.user_pack_id) as pulled
          from pack_opens o join user_packs u on u.id = o.user_pack_id left join purchases p on p.id = u.purchase_id
          where o.user_pack_id > ${after} order by o.user_pack_id limit ${OPEN_PAGE}`,
    );
    for (const open of page) {
      const proof = open.result.fairness;
      const found = (problem: string) =>
        problems.length <= EXAMPLES &&
        problems.push(problems.length === EXAMPLES ? 'and more' : `${open.user_pack_id}: ${problem}`);
      if (!proof) {
        found('the stored result has no proof');
        continue;
      }
      for (const problem of verifyDrawProof(proof)) found(problem);
      if (proof.serverSeed !== open.server_seed) found("the proof's server seed is not the owned pack's");
      const given = proof.draws.map((draw, index) => `${index}:${draw.collectibleId}#${draw.serialNumber}`).join(' ');
      const stored = open.pulled
        .map((pull) => `${pull.drawIndex}:${pull.collectibleId}#${pull.serialNumber}`)
        .join(' ');
      if (given !== stored) found(`the proof's draws (${given}) are not the pulls stored (${stored})`);
    }
    if (page.length < OPEN_PAGE || problems.length > EXAMPLES) return problems;
    after = (page[page.length - 1] as { user_pack_id: string }).user_pack_id;
  }
}

/** Whether the database holds this service's tables (a database never migrated does not). */
export async function holdsServiceTables(db: Database): Promise<boolean> {
  const [row] = await rows<{ found: string | null }>(db, sql`select to_regclass('wallet_ledger')::text as found`);
  return Boolean(row?.found);
}

export interface InvariantResult {
  name: string;
  violations: string[];
  ms: number;
}

/** Runs every check in one transaction, one after another (a database under load is not asked for more at once). */
export async function checkInvariants(db: Database): Promise<InvariantResult[]> {
  return db.transaction(async (tx) => {
    // Before freshly written tables are analysed, the planner can price a page of 500 opens past
    // the JIT thresholds, and compiling it took 270 ms against 30 ms to run it (PostgreSQL 15,
    // 20 pages: 6 s of the checker's 8). These checks are short scans: JIT never pays for itself.
    await tx.execute(sql`set local jit = off`);
    const results: InvariantResult[] = [];
    for (const invariant of INVARIANTS) {
      const started = performance.now();
      const found = await invariant.check(tx);
      results.push({ name: invariant.name, violations: found, ms: performance.now() - started });
    }
    return results;
  });
}

/** Every violation, each prefixed with its invariant: empty when all hold. */
export async function findEconomyViolations(db: Database): Promise<string[]> {
  return (await checkInvariants(db)).flatMap((result) =>
    result.violations.map((violation) => `${result.name}: ${violation}`),
  );
}
