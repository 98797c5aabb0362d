import { sql } from 'drizzle-orm';
import { type Invariant, violations } from './queries.js';

/**
 * The invariants of quests (plugins/app/quests): a claim is one grant of the quest's reward under
 * its source key, a quest's completions count its claims, and progress counts no event twice.
 */
export const QUEST_INVARIANTS: Invariant[] = [
  {
    name: "every claimed period names the grant of its source key (quest:{id}:{period}:{user}), of the quest's reward, to its fan",
    check: violations(
      sql`select p.quest_id, p.user_id, p.period, p.grant_id, g.source_key, g.reward_id, q.reward_id as quest_reward
          from quest_progress p join quests q on q.id = p.quest_id left join grants g on g.id = p.grant_id
          where p.grant_id is not null
            and (g.id is null or g.user_id <> p.user_id or g.reward_id <> q.reward_id
                 or g.source_key <> 'quest:' || p.quest_id || ':' || p.period || ':' || p.user_id)`,
    ),
  },
  {
    name: "every grant of a quest's source key is a claimed period of that quest",
    check: violations(
      sql`select g.id, g.source_key from grants g join quests q on g.source_key like 'quest:' || q.id || ':%'
          where not exists (select 1 from quest_progress p where p.grant_id = g.id)`,
    ),
  },
  {
    name: "a quest's completions are its claimed periods, never past maxCompletions",
    check: violations(
      sql`select q.id, q.completions, q.max_completions, count(p.grant_id)::int as claimed
          from quests q left join quest_progress p on p.quest_id = q.id
          group by q.id
          having q.completions <> count(p.grant_id) or (q.max_completions is not null and q.completions > q.max_completions)`,
    ),
  },
];
