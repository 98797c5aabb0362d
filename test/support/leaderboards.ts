import { LEADERBOARD_INVARIANTS } from '../../plugins/app/invariants/leaderboards.js';
import type { LeaderboardEntry } from '../../schemas/leaderboards.js';
import type { App } from '../../app.js';
import { bearer } from './app.js';
import { expectStatus, type Fan } from './economy.js';

export type BoardEntry = LeaderboardEntry;

interface BoardPageBody {
  data: { board: Record<string, unknown> & { hash: string | null }; entries: BoardEntry[] };
  nextCursor: string | null;
}
interface AroundBody {
  data: { board: Record<string, unknown>; me: BoardEntry | null; above: BoardEntry[]; below: BoardEntry[] };
}

const query = (values: Record<string, string | number>) =>
  Object.fromEntries(Object.entries(values).map(([key, value]) => [key, String(value)]));

/** A page of the collector board (200 expected). */
export async function collectorBoard(app: App, values: Record<string, string | number> = {}): Promise<BoardPageBody> {
  const res = await app.inject({ method: 'GET', url: '/api/leaderboards/collectors', query: query(values) });
  expectStatus(res, 200, 'collector board');
  return res.json();
}

/** The fan on the collector board with the fans around them (200 expected). */
export async function collectorsMe(
  app: App,
  fan: Fan,
  values: Record<string, string | number> = {},
): Promise<AroundBody> {
  const res = await app.inject({
    method: 'GET',
    url: '/api/leaderboards/collectors/me',
    query: query(values),
    headers: bearer(fan.token),
  });
  expectStatus(res, 200, 'collector board me');
  return res.json();
}

/** A page of a league's totals (200 expected). */
export async function leagueBoard(
  app: App,
  leagueId: string,
  values: Record<string, string | number> = {},
): Promise<BoardPageBody> {
  const res = await app.inject({
    method: 'GET',
    url: `/api/leaderboards/leagues/${encodeURIComponent(leagueId)}`,
    query: query(values),
  });
  expectStatus(res, 200, 'league board');
  return res.json();
}

/** The fan in a league's totals with the fans around them (200 expected). */
export async function leagueMe(
  app: App,
  leagueId: string,
  fan: Fan,
  values: Record<string, string | number> = {},
): Promise<AroundBody> {
  const res = await app.inject({
    method: 'GET',
    url: `/api/leaderboards/leagues/${encodeURIComponent(leagueId)}/me`,
    query: query(values),
    headers: bearer(fan.token),
  });
  expectStatus(res, 200, 'league board me');
  return res.json();
}

/** Violations of the leaderboards' invariants (empty when all hold). */
export async function boardViolations(app: App): Promise<string[]> {
  const found: string[] = [];
  for (const invariant of LEADERBOARD_INVARIANTS)
    for (const violation of await invariant.check(app.db.orm)) found.push(`${invariant.name}: ${violation}`);
  return found;
}
