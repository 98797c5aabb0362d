import type { QuestProgressRow, QuestRow } from '../../../db/schema.js';
import type { Quest, QuestCriteria, QuestProgress } from '../../../schemas/quests.js';
import { periodOf } from './periods.js';
import { initialProgress, progressOf, readProgress } from './rules.js';

export function toQuest(row: QuestRow): Quest {
  return {
    id: row.id,
    teamId: row.teamId,
    name: row.name,
    description: row.description,
    status: row.status,
    criteria: row.criteria as QuestCriteria,
    period: row.period,
    timeZone: row.timeZone,
    startsAt: row.startsAt.toISOString(),
    endsAt: row.endsAt?.toISOString() ?? null,
    rewardId: row.rewardId,
    maxCompletions: row.maxCompletions,
    completions: row.completions,
    createdAt: row.createdAt.toISOString(),
    publishedAt: row.publishedAt?.toISOString() ?? null,
  };
}

/**
 * A fan's progress in the quest's period containing `now` (computed in the quest's zone), or in
 * the period of `row` when given: none yet reads as the criteria's start.
 */
export function toProgress(quest: QuestRow, row: QuestProgressRow | undefined, now: Date): QuestProgress {
  const criteria = quest.criteria as QuestCriteria;
  const current = periodOf(now, quest.period, quest.timeZone);
  const measured = row
    ? { progress: row.progress, target: row.target, completed: row.completedAt !== null }
    : progressOf(criteria, initialProgress(criteria));
  // A streak broken since its last event shows as broken now, though nothing was written.
  if (row && !measured.completed && criteria.kind === 'streak') {
    measured.progress = progressOf(criteria, readProgress(criteria, row.state), {
      now,
      timeZone: quest.timeZone,
    }).progress;
  }
  const claimed = row?.claimedAt != null;
  return {
    period: row?.period ?? current.key,
    periodEndsAt: row && row.period !== current.key ? null : (current.endsAt?.toISOString() ?? null),
    progress: measured.progress,
    target: measured.target,
    completed: measured.completed,
    claimed,
    claimable: measured.completed && !claimed && quest.status === 'active',
  };
}
