import type { QuestPeriod, StreakUnit } from '../../../schemas/enums.js';

/**
 * Quest periods in the quest's own time zone (the fan's never matters), with Intl only. A local
 * day is one period whatever its length (23 or 25 hours on daylight-saving days); it starts at
 * local midnight, or at the first local instant that exists when midnight itself is skipped.
 */

export interface Period {
  /** 'once', a local date 'YYYY-MM-DD', or an ISO week 'YYYY-Www'. */
  key: string;
  /** The first instant of the period (the Unix epoch for `once`: the quest's own start bounds it). */
  startsAt: Date;
  /** The first instant after the period; null for `once`. */
  endsAt: Date | null;
}

const DAY_MS = 86_400_000;
/** Offsets of the tz database are within -12h..+14h; a local day is searched within this margin. */
const SEARCH_MARGIN_MS = 2 * DAY_MS;
/** IANA names: `Area/Location`, `UTC`, `Etc/GMT+5`; not offsets like `+01:00`, which Intl also accepts. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;
const MAX_ZONE_NAME = 64;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone (building one costs far more than using it); unknown zones throw. */
function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether `name` is a time zone of the tz database ('UTC' included); refuses offsets and garbage. */
export function isTimeZone(name: unknown): name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_ZONE_NAME || !ZONE_NAME.test(name)) {
    return false;
  }
  try {
    formatterOf(name);
    return true;
  } catch {
    return false;
  }
}

/** The zone as Intl spells it ('utc' → 'UTC', 'europe/paris' → 'Europe/Paris'): the name to store. */
export function canonicalTimeZone(name: string): string | undefined {
  return isTimeZone(name) ? formatterOf(name).resolvedOptions().timeZone : undefined;
}

/** The local wall clock at `ms` as if it were UTC, in milliseconds (so `wall - ms` is the offset). */
function wallClock(ms: number, timeZone: string): number {
  const fields: Record<string, string> = {};
  for (const part of formatterOf(timeZone).formatToParts(new Date(ms))) fields[part.type] = part.value;
  const yearOfEra = Number(fields.year);
  const year = fields.era === 'BC' || fields.era === 'B' ? 1 - yearOfEra : yearOfEra;
  const utc = new Date(0);
  utc.setUTCFullYear(year, Number(fields.month) - 1, Number(fields.day));
  utc.setUTCHours(Number(fields.hour), Number(fields.minute), Number(fields.second), 0);
  return utc.getTime() + (((ms % 1000) + 1000) % 1000);
}

/** A civil date as days since 1970-01-01 (UTC arithmetic: no zone involved). */
function localDay(ms: number, timeZone: string): number {
  return Math.floor(wallClock(ms, timeZone) / DAY_MS);
}

/** Day starts already found, by zone and day: every event of a day asks for the same two. */
const dayStarts = new Map<string, number>();
const MAX_CACHED_DAY_STARTS = 10_000;

/** The first instant whose local date is `day` (days since 1970-01-01) in `timeZone`. */
function startOfLocalDay(day: number, timeZone: string): number {
  const cacheKey = `${timeZone} ${day}`;
  const cached = dayStarts.get(cacheKey);
  if (cached !== undefined) return cached;
  const start = findStartOfLocalDay(day, timeZone);
  if (dayStarts.size >= MAX_CACHED_DAY_STARTS) dayStarts.clear();
  dayStarts.set(cacheKey, start);
  return start;
}

function findStartOfLocalDay(day: number, timeZone: string): number {
  const midnight = day * DAY_MS;
  // Fast path: local midnight exists at one of the offsets around it (the earlier one when it
  // exists twice, as on a day that repeats its last hour at midnight).
  const offsets = new Set([midnight - DAY_MS, midnight, midnight + DAY_MS].map((at) => wallClock(at, timeZone) - at));
  const exact = [...offsets]
    .map((offset) => midnight - offset)
    .filter((at) => wallClock(at, timeZone) === midnight)
    .sort((a, b) => a - b);
  if (exact.length > 0) {
    // An earlier instant may still show this date (midnight repeated): keep the first one.
    let first = exact[0] as number;
    if (localDay(first - 1, timeZone) >= day) first = searchFirst(day, timeZone, first - SEARCH_MARGIN_MS, first);
    return first;
  }
  // Midnight skipped (clocks jumped over it): the day starts at the jump.
  return searchFirst(day, timeZone, midnight - SEARCH_MARGIN_MS, midnight + SEARCH_MARGIN_MS);
}

/** The first millisecond in (low, high] whose local date is at least `day` (the local date only grows). */
function searchFirst(day: number, timeZone: string, low: number, high: number): number {
  let before = low;
  let after = high;
  while (after - before > 1) {
    const middle = before + Math.floor((after - before) / 2);
    if (localDay(middle, timeZone) >= day) after = middle;
    else before = middle;
  }
  return after;
}

function assertInstant(at: Date): number {
  const ms = at instanceof Date ? at.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new RangeError('not a valid date');
  return ms;
}

function assertZone(timeZone: string): void {
  if (!isTimeZone(timeZone)) throw new RangeError(`unknown time zone: ${String(timeZone).slice(0, 64)}`);
}

/** Days since 1970-01-01 → 'YYYY-MM-DD'. */
function dateKey(day: number): string {
  const date = new Date(day * DAY_MS);
  return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}`;
}

const pad = (value: number, width: number) =>
  value < 0 ? `-${String(-value).padStart(width, '0')}` : String(value).padStart(width, '0');

/** 1970-01-01 was a Thursday: the Monday of its ISO week is day -3. */
const mondayOf = (day: number) => day - ((((day + 3) % 7) + 7) % 7);

/** The ISO week key of a day: the week belongs to the year of its Thursday. */
function weekKey(day: number): string {
  const thursday = mondayOf(day) + 3;
  const year = new Date(thursday * DAY_MS).getUTCFullYear();
  const firstThursday = mondayOf(Date.UTC(year, 0, 4) / DAY_MS) + 3;
  const week = (thursday - firstThursday) / 7 + 1;
  return `${pad(year, 4)}-W${pad(week, 2)}`;
}

/** The period of `at` in the quest's time zone: its key and exact bounds. */
export function periodOf(at: Date, period: QuestPeriod, timeZone: string): Period {
  const ms = assertInstant(at);
  assertZone(timeZone);
  if (period === 'once') return { key: 'once', startsAt: new Date(0), endsAt: null };
  const day = localDay(ms, timeZone);
  if (period === 'daily') {
    return {
      key: dateKey(day),
      startsAt: new Date(startOfLocalDay(day, timeZone)),
      endsAt: new Date(startOfLocalDay(day + 1, timeZone)),
    };
  }
  if (period === 'weekly') {
    const monday = mondayOf(day);
    return {
      key: weekKey(day),
      startsAt: new Date(startOfLocalDay(monday, timeZone)),
      endsAt: new Date(startOfLocalDay(monday + 7, timeZone)),
    };
  }
  throw new RangeError(`unknown period: ${String(period).slice(0, 32)}`);
}

const DATE_KEY = /^(\d{4})-(\d{2})-(\d{2})$/;
const WEEK_KEY = /^(\d{4})-W(\d{2})$/;

/**
 * The period a key names (a claim names one), or undefined when the key is not one of this
 * period kind's keys (a malformed date, week 54, a daily key for a weekly quest ...).
 */
export function periodByKey(key: string, period: QuestPeriod, timeZone: string): Period | undefined {
  assertZone(timeZone);
  if (typeof key !== 'string') return undefined;
  if (period === 'once') return key === 'once' ? { key, startsAt: new Date(0), endsAt: null } : undefined;
  const match = (period === 'daily' ? DATE_KEY : WEEK_KEY).exec(key);
  if (!match) return undefined;
  let day: number;
  if (period === 'daily') {
    day = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / DAY_MS;
  } else {
    const firstMonday = mondayOf(Date.UTC(Number(match[1]), 0, 4) / DAY_MS);
    day = firstMonday + (Number(match[2]) - 1) * 7;
  }
  // Round trip: '2026-02-30' or '2026-W54' name another day or week than they spell.
  if (!Number.isFinite(day) || (period === 'daily' ? dateKey(day) : weekKey(day)) !== key) return undefined;
  const first = period === 'daily' ? day : mondayOf(day);
  const length = period === 'daily' ? 1 : 7;
  return {
    key,
    startsAt: new Date(startOfLocalDay(first, timeZone)),
    endsAt: new Date(startOfLocalDay(first + length, timeZone)),
  };
}

/** Consecutive integers for consecutive local days, or ISO weeks, of the zone: what streaks count. */
export function unitIndex(at: Date, unit: StreakUnit, timeZone: string): number {
  const ms = assertInstant(at);
  assertZone(timeZone);
  const day = localDay(ms, timeZone);
  if (unit === 'day') return day;
  if (unit === 'week') return (mondayOf(day) + 3) / 7;
  throw new RangeError(`unknown streak unit: ${String(unit).slice(0, 32)}`);
}
