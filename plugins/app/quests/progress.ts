import type { QuestProgressRow, QuestRow } from '../../../db/schema.js';
import type { DomainEvent, NewEvent } from '../../../schemas/events.js';
import type { QuestCriteria } from '../../../schemas/quests.js';
import type { Database } from '../database/index.js';
import type { EventsService } from '../events/service.js';
import { periodOf } from './periods.js';
import { activeQuests, lockProgress, markCounted, type ProgressKey, saveProgress } from './repository.js';
import {
  advance,
  contribution,
  initialProgress,
  isWithinQuest,
  progressOf,
  readProgress,
  scopedCriteria,
} from './rules.js';

/** Whether an event moves a quest at all (a count of 0, an empty set and `false` do not). */
const contributes = (value: ReturnType<typeof contribution>) =>
  typeof value === 'number' ? value > 0 : Array.isArray(value) ? value.length > 0 : value === true;

/** A quest's criteria as they count: a team's quest counts that team's packs only. */
const criteriaOf = (quest: QuestRow) => scopedCriteria(quest.criteria as QuestCriteria, quest.teamId);

const keyOf = (key: ProgressKey) => `${key.questId}|${key.userId}|${key.period}`;

/**
 * The quests consumer's work on a batch of events, in the transaction that moves its cursor: each
 * event that matches an active quest's criteria moves its fan's progress in the period it
 * happened in (in the quest's time zone), once per quest and fan (a unique row per event), and a
 * progress that reaches its target appends `quest.completed`.
 */
export async function applyEvents(
  tx: Database,
  batch: readonly DomainEvent[],
  events: Pick<EventsService, 'append'>,
): Promise<void> {
  const active = await activeQuests(tx);
  if (active.length === 0) return;
  const matches: { quest: QuestRow; event: DomainEvent; key: ProgressKey }[] = [];
  for (const event of batch) {
    if (!event.userId) continue;
    for (const quest of active) {
      if (!isWithinQuest(quest, event.occurredAt)) continue;
      if (!contributes(contribution(criteriaOf(quest), event))) continue;
      const period = periodOf(event.occurredAt, quest.period, quest.timeZone).key;
      matches.push({ quest, event, key: { questId: quest.id, userId: event.userId, period } });
    }
  }
  if (matches.length === 0) return;

  const uniqueKeys = new Map(matches.map(({ key }) => [keyOf(key), key]));
  const rows = new Map((await lockProgress(tx, [...uniqueKeys.values()])).map((row) => [keyOf(row), row]));
  // A completed period is final: later events of it change nothing, so they are neither counted nor written.
  const open = matches.filter(({ key }) => !rows.get(keyOf(key))?.completedAt);
  if (open.length === 0) return;
  const fresh = await markCounted(
    tx,
    open.map(({ key, event }) => ({ questId: key.questId, userId: key.userId, eventId: Number(event.id) })),
  );
  const counting = open.filter(({ key, event }) => fresh.has(`${key.questId}|${key.userId}|${event.id}`));
  if (counting.length === 0) return;

  const changed = new Map<string, QuestProgressRow>();
  const completed: NewEvent[] = [];
  const now = new Date();
  for (const { quest, event, key } of counting) {
    const criteria = criteriaOf(quest);
    const id = keyOf(key);
    // Completed by an earlier event of this batch: final too.
    if (changed.get(id)?.completedAt) continue;
    const row: QuestProgressRow = changed.get(id) ??
      rows.get(id) ?? {
        ...key,
        state: initialProgress(criteria),
        progress: 0,
        target: progressOf(criteria, initialProgress(criteria)).target,
        completedAt: null,
        claimedAt: null,
        grantId: null,
        updatedAt: now,
      };
    const state = advance(criteria, readProgress(criteria, row.state), event, quest.timeZone);
    const measured = progressOf(criteria, state);
    const next: QuestProgressRow = {
      ...row,
      state,
      progress: measured.progress,
      target: measured.target,
      updatedAt: now,
      completedAt: row.completedAt ?? (measured.completed ? now : null),
    };
    if (next.completedAt && !row.completedAt) {
      completed.push({
        type: 'quest.completed',
        userId: key.userId,
        teamId: quest.teamId,
        subject: quest.id,
        data: { questId: quest.id, period: key.period },
      });
    }
    changed.set(id, next);
  }
  await saveProgress(tx, [...changed.values()]);
  await events.append(tx, ...completed);
}
