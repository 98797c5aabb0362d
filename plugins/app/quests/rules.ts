import { QUEST_ACTIONS, QUEST_STATUSES, type QuestAction, type QuestStatus, RARITIES } from '../../../schemas/enums.js';
import type { DomainEvent, PulledCopy } from '../../../schemas/events.js';
import type {
  CollectCriteria,
  CountCriteria,
  QuestCriteria,
  QuestEventFilter,
  StreakCriteria,
} from '../../../schemas/quests.js';
import { invalidTransition, questImmutable } from './errors.js';
import { unitIndex } from './periods.js';

/**
 * What quests count, as pure functions: what one event adds to a quest, the progress a fan
 * keeps per period (stored as JSON), and the quest's lifecycle. Checks of a quest's own fields
 * are in validation.ts.
 */

export { assertValidQuest, type QuestDraft, validateQuest } from './validation.js';

// --- What one event adds -------------------------------------------------------------------

const RARITY_RANK = new Map<string, number>(RARITIES.map((rarity, rank) => [rarity, rank]));

/** A filter on the pulls themselves, which only `collectible.pulled` (and pulls of an open) carry. */
const filtersPulls = (filter: QuestEventFilter | undefined) =>
  filter?.collectibleId !== undefined || filter?.minRarity !== undefined;

function pullMatches(filter: QuestEventFilter | undefined, pull: PulledCopy): boolean {
  if (filter?.collectibleId !== undefined && pull.collectibleId !== filter.collectibleId) return false;
  if (filter?.minRarity !== undefined) {
    const wanted = RARITY_RANK.get(filter.minRarity);
    const rank = RARITY_RANK.get(pull.rarity);
    // An unknown rarity on either side never matches: a filter that cannot be read counts nothing.
    if (wanted === undefined || rank === undefined || rank < wanted) return false;
  }
  return true;
}

/** The pack and team of a purchase or an open against the filter. */
function packMatches(filter: QuestEventFilter | undefined, event: DomainEvent, packId: unknown): boolean {
  if (filter?.packId !== undefined && packId !== filter.packId) return false;
  if (filter?.teamId !== undefined && (event.teamId ?? null) !== filter.teamId) return false;
  return true;
}

/** The pulls an open carries (none when the data is not what the contract says). */
const pullsOf = (event: DomainEvent): PulledCopy[] =>
  event.type === 'pack.opened' && Array.isArray(event.data?.pulls) ? event.data.pulls : [];

/** How many times one event counts for `count` and `streak` criteria: 0 when it does not match. */
function matches(criteria: CountCriteria | StreakCriteria, event: DomainEvent): number {
  // An event that concerns no fan advances nobody's quest.
  if (!event || event.userId === undefined || event.userId === null) return 0;
  const filter = criteria.filter;
  switch (criteria.event) {
    case 'pack.opened':
      if (event.type !== 'pack.opened' || !packMatches(filter, event, event.data?.packId)) return 0;
      // (validateQuest refuses pull filters here; were one stored, the open must hold a matching pull.)
      return !filtersPulls(filter) || pullsOf(event).some((pull) => pullMatches(filter, pull)) ? 1 : 0;
    case 'collectible.pulled':
      if (event.type !== 'pack.opened' || !packMatches(filter, event, event.data?.packId)) return 0;
      return pullsOf(event).filter((pull) => pullMatches(filter, pull)).length;
    case 'purchase.completed':
      if (event.type !== 'purchase.completed' || filtersPulls(filter)) return 0;
      return packMatches(filter, event, event.data?.packId) ? 1 : 0;
    default:
      return 0;
  }
}

/** What one event adds: a count, the set members it pulled, or whether it keeps a streak. */
export function contribution(criteria: CountCriteria, event: DomainEvent): number;
export function contribution(criteria: CollectCriteria, event: DomainEvent): string[];
export function contribution(criteria: StreakCriteria, event: DomainEvent): boolean;
export function contribution(criteria: QuestCriteria, event: DomainEvent): number | string[] | boolean;
export function contribution(criteria: QuestCriteria, event: DomainEvent): number | string[] | boolean {
  switch (criteria.kind) {
    case 'count':
      return matches(criteria, event);
    case 'streak':
      return matches(criteria, event) > 0;
    case 'collect': {
      if (!event || event.userId === undefined || event.userId === null) return [];
      const pulled = new Set(pullsOf(event).map((pull) => pull.collectibleId));
      // In the set's order, each once: the same collectible twice in one pack is one member.
      return [...new Set(criteria.collectibleIds)].filter((id) => pulled.has(id));
    }
    default:
      throw new TypeError(`unknown quest criteria: ${String((criteria as { kind?: unknown }).kind).slice(0, 32)}`);
  }
}

/**
 * The criteria a team's quest counts with: its events and pulls from the team's packs only, so
 * a team rewards activity on its own catalog. Platform quests (teamId null) count everything.
 */
export function scopedCriteria<C extends QuestCriteria>(criteria: C, teamId: string | null | undefined): C {
  if (!teamId || criteria.kind === 'collect') return criteria;
  return { ...criteria, filter: { ...criteria.filter, teamId } };
}

/** Whether an event at `at` falls in the quest's window: from startsAt (included) to endsAt (excluded). */
export function isWithinQuest(quest: { startsAt: Date; endsAt: Date | null }, at: Date): boolean {
  const time = at.getTime();
  return time >= quest.startsAt.getTime() && (quest.endsAt === null || time < quest.endsAt.getTime());
}

// --- Progress ------------------------------------------------------------------------------

/** Matching events so far (not capped: the target caps what progressOf shows). */
export type CountProgress = { kind: 'count'; count: number };
/** The members of the set pulled so far, in the set's order. */
export type CollectProgress = { kind: 'collect'; collected: string[] };
/**
 * The run of consecutive units ending at `lastUnit` (unitIndex of the last matching event), and
 * the longest run reached (a completed streak stays completed when the run breaks).
 */
export type StreakProgress = { kind: 'streak'; current: number; best: number; lastUnit: number | null };
export type ProgressState = CountProgress | CollectProgress | StreakProgress;

export function initialProgress(criteria: CountCriteria): CountProgress;
export function initialProgress(criteria: CollectCriteria): CollectProgress;
export function initialProgress(criteria: StreakCriteria): StreakProgress;
export function initialProgress(criteria: QuestCriteria): ProgressState;
export function initialProgress(criteria: QuestCriteria): ProgressState {
  switch (criteria.kind) {
    case 'count':
      return { kind: 'count', count: 0 };
    case 'collect':
      return { kind: 'collect', collected: [] };
    case 'streak':
      return { kind: 'streak', current: 0, best: 0, lastUnit: null };
    default:
      throw new TypeError(`unknown quest criteria: ${String((criteria as { kind?: unknown }).kind).slice(0, 32)}`);
  }
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/**
 * A stored state read back (a jsonb value): the initial state when there is none yet; a
 * TypeError when it is not a state of these criteria (never silently reset a fan's progress).
 */
export function readProgress(criteria: QuestCriteria, value: unknown): ProgressState {
  if (value === null || value === undefined) return initialProgress(criteria);
  const state = value as {
    kind?: unknown;
    count?: unknown;
    collected?: unknown;
    current?: unknown;
    best?: unknown;
    lastUnit?: unknown;
  };
  const valid =
    typeof value === 'object' &&
    state.kind === criteria.kind &&
    (criteria.kind === 'count'
      ? isCount(state.count)
      : criteria.kind === 'collect'
        ? Array.isArray(state.collected) && state.collected.every((id: unknown) => typeof id === 'string')
        : isCount(state.current) &&
          isCount(state.best) &&
          (state.current as number) <= (state.best as number) &&
          (state.lastUnit === null || Number.isSafeInteger(state.lastUnit)) &&
          (state.lastUnit === null) === (state.best === 0));
  if (!valid) throw new TypeError(`stored progress is not a ${criteria.kind} progress`);
  return value as ProgressState;
}

function assertState(criteria: QuestCriteria, state: ProgressState): void {
  if (!state || state.kind !== criteria.kind) {
    throw new TypeError(`a ${String(state?.kind).slice(0, 32)} progress cannot follow ${criteria.kind} criteria`);
  }
}

/**
 * The state after one event, in the quest's time zone (streak units). The same object when the
 * event changes nothing, so the caller can skip the write.
 */
export function advance(
  criteria: CountCriteria,
  state: CountProgress,
  event: DomainEvent,
  timeZone: string,
): CountProgress;
export function advance(
  criteria: CollectCriteria,
  state: CollectProgress,
  event: DomainEvent,
  timeZone: string,
): CollectProgress;
export function advance(
  criteria: StreakCriteria,
  state: StreakProgress,
  event: DomainEvent,
  timeZone: string,
): StreakProgress;
export function advance(
  criteria: QuestCriteria,
  state: ProgressState,
  event: DomainEvent,
  timeZone: string,
): ProgressState;
export function advance(
  criteria: QuestCriteria,
  state: ProgressState,
  event: DomainEvent,
  timeZone: string,
): ProgressState {
  assertState(criteria, state);
  switch (criteria.kind) {
    case 'count': {
      const added = contribution(criteria, event);
      const count = state as CountProgress;
      return added === 0 ? count : { kind: 'count', count: count.count + added };
    }
    case 'collect': {
      const collect = state as CollectProgress;
      const have = new Set(collect.collected);
      const added = contribution(criteria, event).filter((id) => !have.has(id));
      if (added.length === 0) return collect;
      for (const id of added) have.add(id);
      return { kind: 'collect', collected: [...new Set(criteria.collectibleIds)].filter((id) => have.has(id)) };
    }
    case 'streak': {
      const streak = state as StreakProgress;
      if (!contribution(criteria, event)) return streak;
      const unit = unitIndex(event.occurredAt, criteria.unit, timeZone);
      let current: number;
      if (streak.lastUnit === null || unit > streak.lastUnit + 1) current = 1;
      else if (unit === streak.lastUnit + 1) current = streak.current + 1;
      // The same unit, or an earlier one committed late: it neither shortens nor extends the run.
      else return streak;
      return { kind: 'streak', current, best: Math.max(streak.best, current), lastUnit: unit };
    }
    default:
      throw new TypeError('unknown quest criteria');
  }
}

export interface Progress {
  progress: number;
  target: number;
  completed: boolean;
}

/**
 * Progress against the target. With `clock`, a streak whose last unit is before the previous
 * unit shows 0: it is broken, and the next event starts it again at 1.
 */
export function progressOf(
  criteria: QuestCriteria,
  state: ProgressState,
  clock?: { now: Date; timeZone: string },
): Progress {
  assertState(criteria, state);
  switch (criteria.kind) {
    case 'count': {
      const count = (state as CountProgress).count;
      return { progress: Math.min(count, criteria.count), target: criteria.count, completed: count >= criteria.count };
    }
    case 'collect': {
      const set = new Set(criteria.collectibleIds);
      const have = new Set((state as CollectProgress).collected.filter((id) => set.has(id))).size;
      return { progress: have, target: set.size, completed: have >= set.size };
    }
    case 'streak': {
      const { current, best, lastUnit } = state as StreakProgress;
      if (best >= criteria.length) return { progress: criteria.length, target: criteria.length, completed: true };
      const broken =
        lastUnit === null ||
        (clock !== undefined && unitIndex(clock.now, criteria.unit, clock.timeZone) > lastUnit + 1);
      return { progress: broken ? 0 : current, target: criteria.length, completed: false };
    }
    default:
      throw new TypeError('unknown quest criteria');
  }
}

// --- Lifecycle -----------------------------------------------------------------------------

/** action → (from → to). A missing cell is an invalid transition. */
export const QUEST_TRANSITIONS: Readonly<Record<QuestAction, Partial<Record<QuestStatus, QuestStatus>>>> = {
  publish: { draft: 'active' },
  // A draft may be ended too: dropped without ever being shown.
  end: { draft: 'ended', active: 'ended' },
};

/** The statuses an action may start from. */
export function allowedFrom(action: QuestAction): QuestStatus[] {
  return QUEST_STATUSES.filter((status) => QUEST_TRANSITIONS[action]?.[status] !== undefined);
}

/** The status after `action`; ConflictError `invalid_transition` when it is not allowed. */
export function nextStatus(status: QuestStatus, action: QuestAction): QuestStatus {
  const next = (QUEST_ACTIONS as readonly string[]).includes(action) ? QUEST_TRANSITIONS[action][status] : undefined;
  if (next === undefined) throw invalidTransition(status, action, allowedFrom(action));
  return next;
}

/** What may change in each status: a published quest keeps its rules, so fans' progress stays true. */
export const EDITABLE_FIELDS: Readonly<Record<QuestStatus, 'all' | readonly string[]>> = {
  draft: 'all',
  active: ['name', 'description', 'endsAt'],
  ended: [],
};

/** ConflictError `quest_immutable` naming each field that cannot change in `status`. */
export function assertEditable(status: QuestStatus, patchKeys: Iterable<string>): void {
  const editable = EDITABLE_FIELDS[status];
  if (editable === undefined) throw new TypeError(`unknown quest status: ${String(status).slice(0, 32)}`);
  if (editable === 'all') return;
  const refused = [...patchKeys].filter((key) => !editable.includes(key));
  if (refused.length > 0) throw questImmutable(status, refused);
}
