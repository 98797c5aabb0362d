import type { LeaderboardWindow } from '../../../schemas/leaderboards.js';
import { ValidationError } from '../errors.js';
import { periodByKey, periodOf } from '../quests/periods.js';
import type { BoardIdentity } from './repository.js';

/**
 * Which board a read or a change means: its key and identity, from the board's kind, what it is
 * about and its window. Weeks are ISO weeks (Monday to Monday) in the board's time zone: UTC for
 * the collector board, the league's own zone for a league, so a week spanning a daylight-saving
 * change is still one week of 167 or 169 hours.
 */

export const COLLECTORS_TIME_ZONE = 'UTC';

export interface WindowChoice {
  window?: LeaderboardWindow;
  season?: string;
  week?: string;
}

const misplaced = (name: 'season' | 'week') =>
  new ValidationError(`\`${name}\` names a window of its own: ask it with window=${name}.`, [
    { path: `/querystring/${name}`, message: `only with window=${name}` },
  ]);

const unknownWeek = (week: string) =>
  new ValidationError(`${week} is not an ISO week.`, [{ path: '/querystring/week', message: 'not an ISO week' }]);

/** The ISO week of an instant in a zone, with its bounds. */
export function weekOf(at: Date, timeZone: string) {
  return periodOf(at, 'weekly', timeZone);
}

/** The bounds of a week named by its key in a zone, or undefined when the key names no week. */
export function weekByKey(key: string, timeZone: string) {
  return periodByKey(key, 'weekly', timeZone);
}

export const collectorsBoard = (window: 'all-time' | 'week', weekKey?: string): BoardIdentity => ({
  key: window === 'all-time' ? 'collectors:all-time' : `collectors:week:${weekKey}`,
  kind: 'collectors',
  subjectId: null,
  window,
  windowKey: window === 'all-time' ? 'all-time' : (weekKey as string),
  timeZone: COLLECTORS_TIME_ZONE,
});

export interface LeagueWindowSubject {
  id: string;
  timeZone: string;
}

export function leagueBoard(league: LeagueWindowSubject, window: LeaderboardWindow, windowKey: string): BoardIdentity {
  return {
    key: window === 'all-time' ? `league:${league.id}:all-time` : `league:${league.id}:${window}:${windowKey}`,
    kind: 'league',
    subjectId: league.id,
    window,
    windowKey,
    timeZone: league.timeZone,
  };
}

/** The boards a change at `at` of a collector's points counts on. */
export const collectorBoardsAt = (at: Date): BoardIdentity[] => [
  collectorsBoard('all-time'),
  collectorsBoard('week', weekOf(at, COLLECTORS_TIME_ZONE).key),
];

/** The collector board a query asks for; it has no seasons. */
export function collectorsBoardOf(query: WindowChoice, now: Date): BoardIdentity {
  const window = query.window ?? 'all-time';
  if (window === 'season' || query.season !== undefined)
    throw new ValidationError('The collector board has no seasons: ask window=all-time or window=week.', [
      window === 'season'
        ? { path: '/querystring/window', message: 'all-time or week' }
        : { path: '/querystring/season', message: 'the collector board has no seasons' },
    ]);
  if (query.week !== undefined && window !== 'week') throw misplaced('week');
  if (window === 'all-time') return collectorsBoard('all-time');
  const week = query.week ?? weekOf(now, COLLECTORS_TIME_ZONE).key;
  if (!weekByKey(week, COLLECTORS_TIME_ZONE)) throw unknownWeek(week);
  return collectorsBoard('week', week);
}

/** A league's board a query asks for: its current season and week unless named. */
export function leagueBoardOf(
  league: LeagueWindowSubject & { season: string },
  query: WindowChoice,
  now: Date,
): BoardIdentity {
  const window = query.window ?? 'all-time';
  if (query.season !== undefined && window !== 'season') throw misplaced('season');
  if (query.week !== undefined && window !== 'week') throw misplaced('week');
  if (window === 'all-time') return leagueBoard(league, 'all-time', 'all-time');
  if (window === 'season') return leagueBoard(league, 'season', query.season ?? league.season);
  const week = query.week ?? weekOf(now, league.timeZone).key;
  if (!weekByKey(week, league.timeZone)) throw unknownWeek(week);
  return leagueBoard(league, 'week', week);
}
