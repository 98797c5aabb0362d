import { sql } from 'drizzle-orm';
import { type Invariant, violations } from './queries.js';

/**
 * The invariants of the grant engine (plugins/app/rewards): every grant's effects exist exactly
 * once, revocations took back what they record, and the packs' counters of reward inventory
 * (promised, granted) are what the promises and grants hold.
 */

/** Each grant's snapshot, unpacked: its coins, its packs by pack, and its copies of collectibles. */
const grantPacks = sql`select g.id as grant_id, p."packId" as pack_id, sum(p.count)::int as count
  from grants g cross join lateral jsonb_to_recordset(g.reward->'packs') as p("packId" text, count int) group by 1, 2`;

export const REWARD_INVARIANTS: Invariant[] = [
  {
    name: "every grant's coins were credited once, by one reward entry to its user, and a revocation took back coinsTakenBack",
    check: violations(
      sql`select g.id, g.status, (g.reward->>'coins')::int as coins, g.coins_taken_back, g.coins_uncollected,
                 count(l.id) filter (where l.kind = 'reward')::int as credits, coalesce(sum(l.amount) filter (where l.kind = 'reward'), 0)::int as credited,
                 coalesce(-sum(l.amount) filter (where l.kind = 'revocation'), 0)::int as taken
          from grants g left join wallet_ledger l on l.reference = g.id and l.user_id = g.user_id and l.kind in ('reward', 'revocation')
          group by g.id
          having count(l.id) filter (where l.kind = 'reward') <> (case when (g.reward->>'coins')::int > 0 then 1 else 0 end)
              or coalesce(sum(l.amount) filter (where l.kind = 'reward'), 0) <> (g.reward->>'coins')::int
              or coalesce(-sum(l.amount) filter (where l.kind = 'revocation'), 0) <> g.coins_taken_back
              or g.coins_taken_back + g.coins_uncollected <> case when g.status = 'revoked' then (g.reward->>'coins')::int else 0 end`,
    ),
  },
  {
    name: "every grant's packs are owned packs of its user, one per pack of its snapshot, and a revocation took back the unopened ones",
    check: violations(
      sql`with wanted as (${grantPacks}),
          owned as (
            select u.grant_id, u.pack_id, count(*)::int as count, count(*) filter (where u.revoked_at is not null)::int as revoked,
                   count(*) filter (where u.opened_at is not null)::int as opened, bool_and(u.user_id = g.user_id) as owners
            from user_packs u join grants g on g.id = u.grant_id group by 1, 2)
          select coalesce(w.grant_id, o.grant_id) as grant_id, coalesce(w.pack_id, o.pack_id) as pack_id, w.count as wanted, o.count as owned, o.owners
          from wanted w full join owned o on o.grant_id = w.grant_id and o.pack_id = w.pack_id
          where w.count is distinct from o.count or o.owners is not true
          union all
          select g.id, null, g.packs_taken_back, coalesce(sum(o.revoked), 0)::int, g.status = 'revoked'
          from grants g left join owned o on o.grant_id = g.id group by g.id
          having g.packs_taken_back <> coalesce(sum(o.revoked), 0)
              or (g.status = 'revoked' and g.packs_kept + g.packs_taken_back <> coalesce(sum(o.count), 0))
              or (g.status = 'granted' and (g.packs_kept <> 0 or coalesce(sum(o.revoked), 0) <> 0))`,
    ),
  },
  {
    name: "every grant's collectibles are pulls of its user, one per copy of its snapshot",
    check: violations(
      sql`with wanted as (
            select g.id as grant_id, c."collectibleId" as collectible_id, sum(c.count)::int as count
            from grants g cross join lateral jsonb_to_recordset(g.reward->'collectibles') as c("collectibleId" text, count int) group by 1, 2),
          given as (
            select p.grant_id, p.collectible_id, count(*)::int as count, bool_and(p.user_id = g.user_id) as owners
            from pulls p join grants g on g.id = p.grant_id group by 1, 2)
          select coalesce(w.grant_id, p.grant_id) as grant_id, coalesce(w.collectible_id, p.collectible_id) as collectible_id,
                 w.count as wanted, p.count as given, p.owners
          from wanted w full join given p on p.grant_id = w.grant_id and p.collectible_id = w.collectible_id
          where w.count is distinct from p.count or p.owners is not true`,
    ),
  },
  {
    name: "a pack's promised count is what open promises hold of it, never past its supply",
    check: violations(
      sql`with held as (
            select p."packId" as pack_id, sum((r.count - r.granted - r.released) * p.count)::int as promised
            from reward_promises r join rewards w on w.id = r.reward_id
            cross join lateral jsonb_to_recordset(w.packs) as p("packId" text, count int) group by 1)
          select k.id, k.promised, coalesce(h.promised, 0) as held, k.supply
          from packs k left join held h on h.pack_id = k.id
          where k.promised <> coalesce(h.promised, 0) or (k.supply is not null and k.promised > k.supply)`,
    ),
  },
  {
    name: "a reward serial block's minted count is the pulls its grants took from it",
    check: violations(
      sql`select s.owner, s.collectible_id, s.minted, coalesce(p.pulled, 0)::int as pulled
          from reward_serials s left join (
            select coalesce(g.promise_key, 'grant:' || g.id) as owner, p.collectible_id, count(*) as pulled
            from pulls p join grants g on g.id = p.grant_id group by 1, 2) p on p.owner = s.owner and p.collectible_id = s.collectible_id
          where s.minted <> coalesce(p.pulled, 0)`,
    ),
  },
  {
    name: "a promise's granted count is its grants",
    check: violations(
      sql`select r.key, r.granted, count(g.id)::int as grants from reward_promises r left join grants g on g.promise_key = r.key
          group by r.key having r.granted <> count(g.id)`,
    ),
  },
];
