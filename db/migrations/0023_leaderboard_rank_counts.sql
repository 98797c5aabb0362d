-- The two counts a live board's ranks come from (plugins/app/leaderboards/ranks.ts): the fans
-- above a score and the fans holding it, summed from at most 255 buckets per level of
-- leaderboard_counts (six levels of 256, scores shifted by 2^47). A PL/pgSQL function, so that
-- its statement is planned once per connection rather than at every rank read: the six ranges
-- cost more to plan than to run.
CREATE FUNCTION leaderboard_rank_counts(p_board text, p_score bigint, OUT above bigint, OUT tied bigint)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  k bigint := p_score + 140737488355328;
BEGIN
  SELECT coalesce(sum(c.fans) FILTER (WHERE c.level > 0 OR c.bucket > k), 0)::bigint,
         coalesce(sum(c.fans) FILTER (WHERE c.level = 0 AND c.bucket = k), 0)::bigint
    INTO above, tied
    FROM leaderboard_counts c
   WHERE c.board = p_board
     AND ((c.level = 0 AND c.bucket >= k AND c.bucket < ((k >> 8) + 1) << 8)
       OR (c.level = 1 AND c.bucket > k >> 8 AND c.bucket < ((k >> 16) + 1) << 8)
       OR (c.level = 2 AND c.bucket > k >> 16 AND c.bucket < ((k >> 24) + 1) << 8)
       OR (c.level = 3 AND c.bucket > k >> 24 AND c.bucket < ((k >> 32) + 1) << 8)
       OR (c.level = 4 AND c.bucket > k >> 32 AND c.bucket < ((k >> 40) + 1) << 8)
       OR (c.level = 5 AND c.bucket > k >> 40));
END;
$$;
