import { canonicalTimeZone, periodByKey, periodOf } from '../quests/periods.js';
import { invalidRange, invalidTimeZone } from './errors.js';

/**
 * The days a dashboard answers for: local dates of an IANA time zone, `from` included and `to`
 * excluded, each a local day of 23, 24 or 25 hours. Pure.
 */

/** The longest range one request may ask for, in days (a leap year). */
export const MAX_RANGE_DAYS = 366;
/** The range when `from` is not given: this many days before `to`. */
export const DEFAULT_RANGE_DAYS = 30;
export const DEFAULT_TIME_ZONE = 'UTC';

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface RangeQuery {
  from?: string;
  to?: string;
  timeZone?: string;
}

export interface DayRange {
  from: string;
  to: string;
  timeZone: string;
  /** The local dates, in order. */
  days: string[];
  /** days.length + 1 instants: each day's first instant, then the first instant after the last day. */
  bounds: Date[];
}

/** A local date as a day number (days since 1970-01-01), or undefined when it is not a real date. */
function dayNumber(date: string): number | undefined {
  const match = DATE.exec(date);
  if (!match) return undefined;
  const day = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / DAY_MS;
  return Number.isFinite(day) && dateOf(day) === date ? day : undefined;
}

const dateOf = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * Resolves a query: the zone defaults to UTC, `to` to the day after today in that zone (so today
 * is included), `from` to DEFAULT_RANGE_DAYS before `to`. Throws a 400 for an unknown zone, a date
 * that is not one, `from` not before `to`, or more than MAX_RANGE_DAYS days.
 */
export function resolveRange(query: RangeQuery, now: Date): DayRange {
  const timeZone = canonicalTimeZone(query.timeZone ?? DEFAULT_TIME_ZONE);
  if (!timeZone) throw invalidTimeZone(query.timeZone as string);
  let to: number;
  if (query.to === undefined) to = (dayNumber(periodOf(now, 'daily', timeZone).key) as number) + 1;
  else {
    const day = dayNumber(query.to);
    if (day === undefined) throw invalidRange('/to', 'is not a date (YYYY-MM-DD)');
    to = day;
  }
  let from: number;
  if (query.from === undefined) from = to - DEFAULT_RANGE_DAYS;
  else {
    const day = dayNumber(query.from);
    if (day === undefined) throw invalidRange('/from', 'is not a date (YYYY-MM-DD)');
    from = day;
  }
  if (from >= to) throw invalidRange('/from', 'must be before `to` (which is excluded)');
  if (to - from > MAX_RANGE_DAYS) throw invalidRange('/to', `is more than ${MAX_RANGE_DAYS} days after \`from\``);
  const days: string[] = [];
  const bounds: Date[] = [];
  for (let day = from; day < to; day++) {
    const date = dateOf(day);
    const period = periodByKey(date, 'daily', timeZone);
    if (!period) throw invalidRange('/from', 'is outside the dates the time zone database knows');
    days.push(date);
    bounds.push(period.startsAt);
    if (day === to - 1) bounds.push(period.endsAt as Date);
  }
  return { from: dateOf(from), to: dateOf(to), timeZone, days, bounds };
}
