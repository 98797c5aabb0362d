import { sql } from 'drizzle-orm';
import { SCORE_OFFSET } from '../leaderboards/ranks.js';
import { type Invariant, violations } from './queries.js';

/**
 * The invariants of leaderboards (plugins/app/leaderboards): the rank structure counts exactly
 * the live entries, a frozen board's rows are its entries ranked, and the collector board agrees
 * with the scores the opening and the grant engine keep (once the consumer has caught up).
 */
const LEVEL_BUCKETS = sql`(select board, level, ((e.score + ${sql.raw(String(SCORE_OFFSET))}) >> (8 * level)) as bucket, count(*)::int as fans
  from leaderboard_entries e, generate_series(0, 5) as level
  group by 1, 2, 3)`;

export const LEADERBOARD_INVARIANTS: Invariant[] = [
  {
    name: 'the rank structure of every live board counts its entries, bucket by bucket at every level',
    check: violations(
      sql`select coalesce(c.board, e.board) as board, coalesce(c.level, e.level) as level, coalesce(c.bucket, e.bucket) as bucket,
            c.fans as counted, e.fans as entries
          from leaderboard_counts c full join ${LEVEL_BUCKETS} e
            on e.board = c.board and e.level = c.level and e.bucket = c.bucket
          where coalesce(c.fans, 0) <> coalesce(e.fans, 0)`,
    ),
  },
  {
    name: "a board's entrants are its entries",
    check: violations(
      sql`select b.key, b.entrants, coalesce(e.entries, 0) as entries
          from leaderboards b left join (select board, count(*)::int as entries from leaderboard_entries group by board) e on e.board = b.key
          where b.entrants <> coalesce(e.entries, 0)`,
    ),
  },
  {
    name: "a frozen board's rows are its entries in board order, with their competition ranks",
    check: violations(
      sql`select coalesce(f.board, x.board) as board, coalesce(f.user_id, x.user_id) as user_id,
            f.position, x.position as expected_position, f.rank, x.rank as expected_rank, f.score, x.score as expected_score
          from (select e.board, e.user_id, e.score,
                  rank() over (partition by e.board order by e.order_key) as rank,
                  row_number() over (partition by e.board order by e.order_key, e.reached_at, e.user_id) as position
                from leaderboard_entries e join leaderboards b on b.key = e.board and b.frozen_at is not null) x
          full join leaderboard_frozen_rows f on f.board = x.board and f.user_id = x.user_id
          where f.position is distinct from x.position or f.rank is distinct from x.rank or f.score is distinct from x.score`,
    ),
  },
  {
    name: "a frozen board's hash is the SHA-256 of its rows' canonical lines",
    check: violations(
      sql`select b.key, b.hash, h.recomputed from leaderboards b,
            lateral (select encode(sha256(convert_to(coalesce(string_agg(
              format('[%s,%s,%s,%s]', f.position, f.rank, to_json(f.user_id)::text, to_json(((f.score::numeric / 100)::numeric(20, 2))::text)::text),
              E'\n' order by f.position), ''), 'UTF8')), 'hex') as recomputed
              from leaderboard_frozen_rows f where f.board = b.key) h
          where b.frozen_at is not null and b.hash <> h.recomputed`,
    ),
  },
  {
    name: "the all-time collector board holds each fan's score (its points in hundredths) once the consumer has read every pull (checked only then)",
    check: violations(
      sql`select u.id, u.score, e.score as board_score
          from users u left join leaderboard_entries e on e.board = 'collectors:all-time' and e.user_id = u.id
          where (u.score > 0 or e.score is not null) and coalesce(e.score, 0) <> u.score::bigint * 100
            and exists (select 1 from event_cursors c where c.consumer = 'leaderboards'
                        and not exists (select 1 from events v where (v.txid, v.id) > (c.txid, c.event_id) and v.type in ('pack.opened', 'reward.granted')))`,
    ),
  },
];
