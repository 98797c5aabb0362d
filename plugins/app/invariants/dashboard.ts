import { sql } from 'drizzle-orm';
import { type Invariant, violations } from './queries.js';

/**
 * The invariants of the dashboard's rollups (plugins/app/dashboard): for the events they have
 * counted (dashboard_counted, whatever the consumer's lag), their sums equal what the sales
 * tables and the ledger hold for the same purchases and opens.
 */

/** Every figure column of dashboard_hours. */
const SUMS = [
  'packs_sold',
  'coins_taken',
  'packs_opened',
  'pulls_common',
  'pulls_uncommon',
  'pulls_rare',
  'pulls_epic',
  'pulls_legendary',
  'quest_completions',
  'grants',
  'league_entries',
];

const COUNTED = sql`counted as (select e.type, e.subject from dashboard_counted c join events e on e.id = c.event_id)`;

export const DASHBOARD_INVARIANTS: Invariant[] = [
  {
    name: "the dashboard's packs sold and coins taken per team equal its counted purchases and their ledger debits",
    check: violations(
      sql`with ${COUNTED},
          sales as (
            select coalesce(k.team_id, '') as team_id, count(*)::bigint as sold, coalesce(-sum(l.amount), 0)::bigint as coins
            from counted c join purchases p on p.id = c.subject join packs k on k.id = p.pack_id
            left join wallet_ledger l on l.kind = 'purchase' and l.reference = p.id and l.user_id = p.user_id
            where c.type = 'purchase.completed' and p.status = 'completed'
            group by 1),
          rolled as (
            select team_id, sum(packs_sold)::bigint as sold, sum(coins_taken)::bigint as coins from dashboard_hours
            where pack_id <> '*' group by 1)
          select coalesce(r.team_id, s.team_id) as team_id, r.sold as rolled_sold, s.sold as purchases,
                 r.coins as rolled_coins, s.coins as ledger_coins
          from rolled r full join sales s on s.team_id = r.team_id
          where coalesce(r.sold, 0) <> coalesce(s.sold, 0) or coalesce(r.coins, 0) <> coalesce(s.coins, 0)`,
    ),
  },
  {
    name: "the dashboard's packs opened and pulls per team equal its counted opens and their pulls",
    check: violations(
      sql`with ${COUNTED},
          opens as (
            select coalesce(k.team_id, '') as team_id, count(*)::bigint as opened, sum(n.pulls)::bigint as pulls
            from counted c join pack_opens o on o.user_pack_id = c.subject join packs k on k.id = o.pack_id
            cross join lateral (select count(*) as pulls from pulls l where l.user_pack_id = o.user_pack_id) n
            where c.type = 'pack.opened'
            group by 1),
          rolled as (
            select team_id, sum(packs_opened)::bigint as opened,
                   sum(pulls_common + pulls_uncommon + pulls_rare + pulls_epic + pulls_legendary)::bigint as pulls
            from dashboard_hours where pack_id <> '*' group by 1)
          select coalesce(r.team_id, o.team_id) as team_id, r.opened as rolled_opened, o.opened as opens,
                 r.pulls as rolled_pulls, o.pulls as pulls
          from rolled r full join opens o on o.team_id = r.team_id
          where coalesce(r.opened, 0) <> coalesce(o.opened, 0) or coalesce(r.pulls, 0) <> coalesce(o.pulls, 0)`,
    ),
  },
  {
    name: "each hour's total row of the dashboard is the sum of that hour's other rows",
    check: violations(
      sql`select team_id, hour, count(*) filter (where pack_id = '*')::int as total_rows
          from dashboard_hours group by team_id, hour
          having count(*) filter (where pack_id = '*') <> 1
             or ${sql.raw(SUMS.map((c) => `coalesce(sum(${c}) filter (where pack_id = '*'), 0) <> coalesce(sum(${c}) filter (where pack_id <> '*'), 0)`).join(' or '))}`,
    ),
  },
  {
    name: "the dashboard's draws per pack and collectible equal the pulls of its counted opens",
    check: violations(
      sql`with ${COUNTED},
          drawn as (
            select l.pack_id, l.collectible_id, count(*)::bigint as draws
            from counted c join pulls l on l.user_pack_id = c.subject
            where c.type = 'pack.opened'
            group by 1, 2)
          select coalesce(d.pack_id, p.pack_id) as pack_id, coalesce(d.collectible_id, p.collectible_id) as collectible_id,
                 d.draws as rolled, p.draws as pulls
          from dashboard_pack_draws d full join drawn p on p.pack_id = d.pack_id and p.collectible_id = d.collectible_id
          where coalesce(d.draws, 0) <> coalesce(p.draws, 0)`,
    ),
  },
];
