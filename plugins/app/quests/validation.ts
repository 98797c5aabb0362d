import { QUEST_EVENTS, QUEST_PERIODS, RARITIES, STREAK_UNITS } from '../../../schemas/enums.js';
import { MAX_COLLECT_SET, MAX_COUNT_TARGET, STREAK_LENGTH } from '../../../schemas/quests.js';
import type { ErrorDetail } from '../errors.js';
import { invalidQuest } from './errors.js';
import { isTimeZone, unitIndex } from './periods.js';

/**
 * Checks across a quest's fields that its schema cannot express. The input is the quest as it
 * would be stored (for an update: the stored quest with the patch applied), read defensively:
 * it may come from anywhere.
 */
export interface QuestDraft {
  teamId?: string | null;
  criteria?: unknown;
  period?: unknown;
  timeZone?: unknown;
  startsAt?: string | Date | null;
  endsAt?: string | Date | null;
}

const MAX_PATH_ID = 100;

/** Milliseconds, null when absent, NaN when not a date. */
function instant(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'string' && value.length <= 40) return Date.parse(value);
  return Number.NaN;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isInt = (value: unknown, minimum: number, maximum: number) =>
  typeof value === 'number' && Number.isInteger(value) && value >= minimum && value <= maximum;

const oneOf = (values: readonly string[], value: unknown) => typeof value === 'string' && values.includes(value);

/** The problems of the quest, as `{ path, message }` (JSON pointers into the request body); [] when none. */
export function validateQuest(input: QuestDraft, now: Date = new Date()): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const add = (path: string, message: string) => problems.push({ path, message });
  if (!isObject(input)) return [{ path: '/', message: 'must be an object' }];

  const timeZone = input.timeZone ?? 'UTC';
  const zoneValid = isTimeZone(timeZone);
  if (!zoneValid) add('/timeZone', 'is not a time zone of the IANA database');
  const period = input.period ?? 'once';
  if (!oneOf(QUEST_PERIODS, period)) add('/period', `must be one of: ${QUEST_PERIODS.join(', ')}`);

  const startsAt = instant(input.startsAt);
  const endsAt = instant(input.endsAt);
  if (Number.isNaN(startsAt)) add('/startsAt', 'is not a date');
  if (Number.isNaN(endsAt)) add('/endsAt', 'is not a date');
  // Without startsAt the quest starts when it is created.
  const start = startsAt ?? now.getTime();
  if (endsAt !== null && !Number.isNaN(endsAt) && !Number.isNaN(start) && endsAt <= start) {
    add('/endsAt', startsAt === null ? 'must be in the future' : 'must be after startsAt');
  }

  const criteria = input.criteria;
  if (!isObject(criteria)) {
    add('/criteria', 'is required');
    return problems;
  }
  switch (criteria.kind) {
    case 'count':
      if (!isInt(criteria.count, 1, MAX_COUNT_TARGET)) add('/criteria/count', `must be 1 to ${MAX_COUNT_TARGET}`);
      checkEventAndFilter(criteria, input.teamId, add);
      break;
    case 'collect':
      checkCollectibleIds(criteria.collectibleIds, add);
      break;
    case 'streak': {
      checkEventAndFilter(criteria, input.teamId, add);
      const { unit, length } = criteria;
      if (!oneOf(STREAK_UNITS, unit)) add('/criteria/unit', `must be one of: ${STREAK_UNITS.join(', ')}`);
      if (!isInt(length, STREAK_LENGTH.minimum, STREAK_LENGTH.maximum)) {
        add('/criteria/length', `must be ${STREAK_LENGTH.minimum} to ${STREAK_LENGTH.maximum}`);
      }
      if (period === 'daily') {
        // Progress restarts every day: a run of 2 days or more never fits in one.
        add('/period', 'cannot be daily for a streak: progress restarts each day, so the streak could never complete');
      } else if (period === 'weekly') {
        if (unit === 'week') add('/criteria/unit', 'must be day on a weekly quest: progress restarts each week');
        else if (typeof length === 'number' && length > 7)
          add('/criteria/length', 'must be at most 7 on a weekly quest');
      } else if (
        period === 'once' &&
        zoneValid &&
        oneOf(STREAK_UNITS, unit) &&
        typeof length === 'number' &&
        endsAt !== null &&
        !Number.isNaN(endsAt) &&
        !Number.isNaN(start) &&
        endsAt > start
      ) {
        const zone = timeZone as string;
        const streakUnit = unit as 'day' | 'week';
        const units =
          unitIndex(new Date(endsAt - 1), streakUnit, zone) - unitIndex(new Date(start), streakUnit, zone) + 1;
        if (units < length) add('/criteria/length', `must be at most ${units}: the quest spans ${units} ${unit}s`);
      }
      break;
    }
    default:
      add('/criteria/kind', 'must be one of: count, collect, streak');
  }
  return problems;
}

/** The same checks, thrown as one ValidationError (400 `validation_failed`) listing them. */
export function assertValidQuest(input: QuestDraft, now?: Date): void {
  const problems = validateQuest(input, now);
  if (problems.length > 0) throw invalidQuest(problems);
}

type Add = (path: string, message: string) => void;

function checkEventAndFilter(criteria: Record<string, unknown>, teamId: unknown, add: Add): void {
  const event = criteria.event;
  if (!oneOf(QUEST_EVENTS, event)) add('/criteria/event', `must be one of: ${QUEST_EVENTS.join(', ')}`);
  const filter = criteria.filter;
  if (filter === undefined) return;
  if (!isObject(filter)) {
    add('/criteria/filter', 'must be an object');
    return;
  }
  for (const key of ['collectibleId', 'minRarity'] as const) {
    if (filter[key] !== undefined && event !== 'collectible.pulled') {
      add(`/criteria/filter/${key}`, 'applies to collectible.pulled only');
    }
  }
  if (filter.minRarity !== undefined && !oneOf(RARITIES, filter.minRarity)) {
    add('/criteria/filter/minRarity', `must be one of: ${RARITIES.join(', ')}`);
  }
  // A team's quest counts its own packs only (scopedCriteria): naming another team never matches.
  if (typeof teamId === 'string' && teamId && filter.teamId !== undefined && filter.teamId !== teamId) {
    add('/criteria/filter/teamId', "must be the quest's own team");
  }
}

function checkCollectibleIds(ids: unknown, add: Add): void {
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_COLLECT_SET) {
    add('/criteria/collectibleIds', `must list 1 to ${MAX_COLLECT_SET} collectibles`);
    return;
  }
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (typeof id !== 'string' || id.length === 0 || id.length > 128) {
      add(`/criteria/collectibleIds/${index}`, 'must be a collectible id');
    } else if (seen.has(id)) {
      add(`/criteria/collectibleIds/${index}`, `repeats ${id.slice(0, MAX_PATH_ID)}`);
    } else {
      seen.add(id);
    }
  });
}
