import { sql } from 'drizzle-orm';
import { standingsHash } from '../leagues/rules.js';
import { EXAMPLES, type Invariant, rows, violations } from './queries.js';

/**
 * The invariants of leagues (plugins/app/leagues): a final round's hash is its rows' hash, each
 * winner is paid at most once under the round's source key, a copy plays in one round at a time,
 * and a round's entrants are its standings.
 */
export const LEAGUE_INVARIANTS: Invariant[] = [
  {
    name: "every final round's standingsHash is the hash of its standings rows",
    check: async (db) => {
      const found: string[] = [];
      const finals = await rows<{ id: string; standings_hash: string }>(
        db,
        sql`select id, standings_hash from league_rounds where finalized_at is not null order by id`,
      );
      for (const round of finals) {
        const lines = await rows<{
          position: number;
          rank: number;
          user_id: string;
          score: string;
          best: string;
          submitted_at: string | Date;
        }>(
          db,
          sql`select position, rank, user_id, score::text, best::text, submitted_at from round_standings
              where round_id = ${round.id} order by position`,
        );
        const hash = standingsHash(
          lines.map((line) => ({
            position: line.position,
            rank: line.rank,
            userId: line.user_id,
            score: Number(line.score),
            best: Number(line.best),
            submittedAt: new Date(line.submitted_at),
          })),
        );
        if (hash !== round.standings_hash)
          found.push(JSON.stringify({ roundId: round.id, stored: round.standings_hash, hash }));
        if (found.length > EXAMPLES) return [...found.slice(0, EXAMPLES), 'and more'];
      }
      return found;
    },
  },
  {
    name: 'every paid winner names one grant, of its prize, to its fan, under round:{roundId}:{userId}',
    check: violations(
      sql`select s.round_id, s.user_id, s.grant_id, g.source_key, g.user_id as grant_user, g.reward_id
          from round_standings s left join grants g on g.id = s.grant_id
          where s.grant_id is not null
            and (g.id is null or g.user_id <> s.user_id or g.reward_id <> s.reward_id
                 or g.source_key <> 'round:' || s.round_id || ':' || s.user_id)`,
    ),
  },
  {
    name: "every grant of a round's source key is its winner's one grant",
    check: violations(
      sql`select g.id, g.source_key from grants g join league_rounds r on g.source_key like 'round:' || r.id || ':%'
          where not exists (select 1 from round_standings s where s.grant_id = g.id and s.round_id = r.id)`,
    ),
  },
  {
    name: 'no copy is in two lineups of rounds whose play windows overlap',
    check: violations(
      sql`select a.pull_id, a.round_id, b.round_id as other_round
          from lineup_entries a
          join lineup_entries b on b.pull_id = a.pull_id and b.round_id > a.round_id
          join league_rounds ra on ra.id = a.round_id
          join league_rounds rb on rb.id = b.round_id
          where ra.locks_at < rb.ends_at and rb.locks_at < ra.ends_at`,
    ),
  },
  {
    name: "a final round's entrants are its standings rows, and only final rounds have standings",
    check: violations(
      sql`select r.id, r.entrants, r.finalized_at, count(s.user_id)::int as rows
          from league_rounds r left join round_standings s on s.round_id = r.id
          group by r.id
          having (r.finalized_at is not null and r.entrants <> count(s.user_id))
              or (r.finalized_at is null and count(s.user_id) > 0)`,
    ),
  },
];
