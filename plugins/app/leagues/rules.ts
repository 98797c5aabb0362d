import { createHash } from 'node:crypto';
import { RARITIES, type Rarity } from '../../../schemas/enums.js';
import {
  type LeagueRules,
  MAX_PRIZE_BANDS,
  MAX_PRIZE_RANK,
  MULTIPLIER_RANGE,
  type PrizeBand,
} from '../../../schemas/leagues.js';
import type { ErrorDetail } from '../errors.js';

/**
 * What leagues decide, as pure functions: whether rules, lineups, prize bands and round times
 * hold together, what a lineup scores, how lineups rank, who wins what, and the hash of a final
 * standings table. Points are kept in hundredths as integers, so sums and ties are exact.
 */

const RARITY_ORDER = new Map<string, number>(RARITIES.map((rarity, index) => [rarity, index]));

// --- Rules ----------------------------------------------------------------------------------

/** Whether a multiplier has at most two decimals (m × 100 is an integer, within float noise). */
const hasTwoDecimals = (value: number) => Math.abs(Math.round(value * 100) - value * 100) < 1e-9;

/**
 * The problems of a league's rules that its schema cannot express, as JSON pointers under
 * `path`: a multiplier with more than two decimals (2.005) or out of range, a rarity cap above
 * `lineupSize`, an eligible team listed twice. [] when none.
 */
export function validateLeagueRules(rules: LeagueRules, path = '/rules'): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const rarity of RARITIES) {
    const multiplier = rules.multipliers?.[rarity];
    if (
      multiplier !== undefined &&
      !(multiplier >= MULTIPLIER_RANGE.minimum && multiplier <= MULTIPLIER_RANGE.maximum && hasTwoDecimals(multiplier))
    ) {
      problems.push({
        path: `${path}/multipliers/${rarity}`,
        message: `must be ${MULTIPLIER_RANGE.minimum} to ${MULTIPLIER_RANGE.maximum} with at most two decimals`,
      });
    }
    const cap = rules.rarityCaps?.[rarity];
    if (cap !== undefined && cap > rules.lineupSize) {
      problems.push({
        path: `${path}/rarityCaps/${rarity}`,
        message: `must be at most lineupSize (${rules.lineupSize})`,
      });
    }
  }
  const teamIds = rules.eligible.teamIds ?? [];
  teamIds.forEach((teamId, index) => {
    if (teamIds.indexOf(teamId) < index)
      problems.push({ path: `${path}/eligible/teamIds/${index}`, message: 'listed twice' });
  });
  return problems;
}

/** Each rarity's multiplier in hundredths (1.15 → 115); a rarity without one counts once (100). */
export function multipliersInHundredths(rules: Pick<LeagueRules, 'multipliers'>): Record<Rarity, number> {
  return Object.fromEntries(
    RARITIES.map((rarity) => [rarity, Math.round((rules.multipliers?.[rarity] ?? 1) * 100)]),
  ) as Record<Rarity, number>;
}

// --- Lineups --------------------------------------------------------------------------------

/** A copy the fan owns, as the service reads it for a lineup. */
export interface LineupCopy {
  pullId: string;
  collectibleId: string;
  /** The collectible's team; null for a platform collectible, which no team's league accepts. */
  teamId: string | null;
  rarity: Rarity;
}

/**
 * The positions (indexes into `pullIds`) of the pulls that are not among the fan's `copies`,
 * every occurrence (checkLineup reports a repeat as a repeat instead).
 */
export function notOwned(pullIds: readonly string[], copies: readonly Pick<LineupCopy, 'pullId'>[]): number[] {
  const owned = new Set(copies.map((copy) => copy.pullId));
  return pullIds.flatMap((pullId, position) => (owned.has(pullId) ? [] : [position]));
}

const NOT_OWNED = 'not a copy you own';

/** The details of not-owned positions, for an answer that lists them. */
export const notOwnedDetails = (positions: readonly number[]): ErrorDetail[] =>
  positions.map((position) => ({ path: `/pullIds/${position}`, message: NOT_OWNED }));

export interface LineupCheck {
  /** Positions of pulls the fan does not own: the service answers 404 when there is any. */
  notOwned: number[];
  /** Every other problem (the service answers 400), at most one per position, in position order. */
  invalid: ErrorDetail[];
}

/**
 * Checks a lineup against the league's rules. `copies` are the fan's own copies among `pullIds`
 * (the service reads them); `leagueTeamId` is the league's team, the only eligible one when the
 * rules list none.
 *
 * Ownership failures are kept apart from the others (`notOwned` positions vs `invalid` details),
 * since the service answers them with 404 and the others with 400; `notOwnedDetails` turns the
 * positions into details. Each position is reported once, for the first of: listed twice (a
 * repeat of an earlier position), not owned, not eligible (team, then rarity below
 * `minRarity`), over its rarity's cap (the positions past the cap, in lineup order; copies
 * already refused do not count toward a cap). A lineup whose length is not `lineupSize` gets
 * one detail at `/pullIds`, listed first.
 */
export function checkLineup(input: {
  rules: LeagueRules;
  leagueTeamId: string;
  pullIds: readonly string[];
  copies: readonly LineupCopy[];
}): LineupCheck {
  const { rules, pullIds } = input;
  const copies = new Map(input.copies.map((copy) => [copy.pullId, copy]));
  const teams = new Set(rules.eligible.teamIds ?? [input.leagueTeamId]);
  const minRarity = rules.eligible.minRarity;
  const minRank = minRarity === undefined ? 0 : (RARITY_ORDER.get(minRarity) ?? 0);
  const counts = new Map<Rarity, number>();

  const missing: number[] = [];
  const invalid: ErrorDetail[] = [];
  if (pullIds.length !== rules.lineupSize) {
    invalid.push({
      path: '/pullIds',
      message: `must hold exactly ${rules.lineupSize} copies (${pullIds.length} given)`,
    });
  }
  /** What is wrong at one position: a message (NOT_OWNED for a copy not owned), or nothing. */
  const problemAt = (pullId: string, position: number): string | undefined => {
    if (pullIds.indexOf(pullId) < position) return 'listed twice';
    const copy = copies.get(pullId);
    if (!copy) return NOT_OWNED;
    if (copy.teamId === null || !teams.has(copy.teamId)) return "its team's collectibles are not eligible";
    if ((RARITY_ORDER.get(copy.rarity) ?? -1) < minRank) return `must be ${minRarity} or rarer`;
    const count = (counts.get(copy.rarity) ?? 0) + 1;
    counts.set(copy.rarity, count);
    const cap = rules.rarityCaps?.[copy.rarity];
    return cap !== undefined && count > cap ? `over the cap of ${cap} ${copy.rarity} copies` : undefined;
  };
  pullIds.forEach((pullId, position) => {
    const problem = problemAt(pullId, position);
    if (problem === NOT_OWNED) missing.push(position);
    else if (problem !== undefined) invalid.push({ path: `/pullIds/${position}`, message: problem });
  });
  return { notOwned: missing, invalid };
}

// --- Points ---------------------------------------------------------------------------------

/**
 * A lineup's points in hundredths, exact integers: each copy earns its collectible's round
 * score (0 when it has none) times its rarity's multiplier in hundredths. `best` is the highest
 * single copy's weighted points (it may be negative), 0 for an empty lineup.
 */
export function lineupScore(
  copies: readonly { collectibleId: string; rarity: Rarity }[],
  scores: ReadonlyMap<string, number>,
  multipliers: Record<Rarity, number>,
): { score: number; best: number } {
  let score = 0;
  let best = copies.length === 0 ? 0 : Number.NEGATIVE_INFINITY;
  for (const copy of copies) {
    const points = (scores.get(copy.collectibleId) ?? 0) * multipliers[copy.rarity];
    score += points;
    best = Math.max(best, points);
  }
  return { score, best };
}

/** Hundredths as a decimal string with exactly two decimals: -150 → "-1.50", 0 → "0.00". */
export function formatPoints(hundredths: number): string {
  if (!Number.isSafeInteger(hundredths)) throw new RangeError(`not a whole number of hundredths: ${hundredths}`);
  const magnitude = Math.abs(hundredths);
  const sign = hundredths < 0 ? '-' : '';
  return `${sign}${Math.floor(magnitude / 100)}.${String(magnitude % 100).padStart(2, '0')}`;
}

/** The inverse of formatPoints: "-1.50" → -150. Refuses any other form. */
export function parsePoints(text: string): number {
  const match = /^(-?)(\d+)\.(\d{2})$/.exec(text);
  if (!match) throw new RangeError(`not points with two decimals: ${text}`);
  const magnitude = Number(match[2]) * 100 + Number(match[3]);
  return match[1] === '-' && magnitude !== 0 ? -magnitude : magnitude;
}

/** Hundredths as the number the API serves (-150 → -1.5), and back (float noise rounded away). */
export const pointsToApi = (hundredths: number): number => hundredths / 100;
export const pointsFromApi = (points: number): number => Math.round(points * 100) || 0;

// --- Standings ------------------------------------------------------------------------------

export interface StandingEntry {
  userId: string;
  /** The lineup's points, in hundredths. */
  score: number;
  /** Its best single copy's points, in hundredths. */
  best: number;
  submittedAt: Date;
}

export type Standing<T extends StandingEntry = StandingEntry> = T & {
  /** Competition rank on score alone ("1224"): 1 + the number of entries with a higher score. */
  rank: number;
  /** 1..n in the order of the table. */
  position: number;
};

/** Code-unit order, the same on every machine (localeCompare depends on the locale). */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Ranks lineups. The table's order: score descending, then best single copy descending, then
 * earliest submission, then userId ascending (code-unit order): deterministic, never the input
 * order. `rank` is competition ranking on score only, so entries tied on score share a rank
 * whatever their tie-breakers, and the next score's rank skips (1, 2, 2, 2, 5).
 */
export function rankStandings<T extends StandingEntry>(entries: readonly T[]): Standing<T>[] {
  const ordered = [...entries].sort(
    (a, b) =>
      b.score - a.score ||
      b.best - a.best ||
      a.submittedAt.getTime() - b.submittedAt.getTime() ||
      compareText(a.userId, b.userId),
  );
  const standings: Standing<T>[] = [];
  ordered.forEach((entry, index) => {
    const previous = standings[index - 1];
    const rank = previous && previous.score === entry.score ? previous.rank : index + 1;
    standings.push({ ...entry, rank, position: index + 1 });
  });
  return standings;
}

/**
 * One row of the standings as hashed: the JSON array
 * `[position, rank, userId, score, best, submittedAt]` where score and best are points with
 * exactly two decimals as strings ("-1.50"), and submittedAt is ISO-8601 UTC with milliseconds
 * ("2026-11-26T12:00:00.000Z"), serialized by JSON.stringify (no spaces), e.g.
 * `[1,1,"fan-1","12.30","4.05","2026-11-26T12:00:00.000Z"]`.
 */
export function canonicalStandingLine(standing: {
  position: number;
  rank: number;
  userId: string;
  score: number;
  best: number;
  submittedAt: Date;
}): string {
  return JSON.stringify([
    standing.position,
    standing.rank,
    standing.userId,
    formatPoints(standing.score),
    formatPoints(standing.best),
    standing.submittedAt.toISOString(),
  ]);
}

/**
 * The same line from a row as the API serves it: score and best as numbers of points (-1.5,
 * 0.05), submittedAt as an ISO-8601 string. Fans recompute the hash from the API this way.
 */
export function standingLineFromApi(row: {
  position: number;
  rank: number;
  userId: string;
  score: number;
  best: number;
  submittedAt: string;
}): string {
  return canonicalStandingLine({
    ...row,
    score: pointsFromApi(row.score),
    best: pointsFromApi(row.best),
    submittedAt: new Date(row.submittedAt),
  });
}

/**
 * The SHA-256 (lowercase hex) of the standings: their canonical lines (canonicalStandingLine)
 * in position order, joined by "\n" with no trailing newline, as UTF-8. No standings hash the
 * empty string (e3b0c442...b855).
 */
export function standingsHash(standings: readonly Parameters<typeof canonicalStandingLine>[0][]): string {
  const lines = [...standings].sort((a, b) => a.position - b.position).map(canonicalStandingLine);
  return createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex');
}

// --- Prizes ---------------------------------------------------------------------------------

/** How many ranks a band covers (more fans may win it when they tie on its last rank). */
export const bandSize = (band: PrizeBand): number => band.toRank - band.fromRank + 1;

/**
 * The problems of a league's prize bands, as JSON pointers under `path`: more than
 * MAX_PRIZE_BANDS bands, a rank that is not a whole number from 1 to MAX_PRIZE_RANK, fromRank
 * after toRank, a band overlapping an earlier one (reported on the later band in the list).
 */
export function validatePrizes(bands: readonly PrizeBand[], path = '/prizes'): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  if (bands.length > MAX_PRIZE_BANDS) problems.push({ path, message: `must have at most ${MAX_PRIZE_BANDS} bands` });
  const isRank = (value: number) => Number.isInteger(value) && value >= 1 && value <= MAX_PRIZE_RANK;
  const valid: { band: PrizeBand; index: number }[] = [];
  bands.forEach((band, index) => {
    const rankProblem = `must be a whole number from 1 to ${MAX_PRIZE_RANK}`;
    if (!isRank(band.fromRank)) problems.push({ path: `${path}/${index}/fromRank`, message: rankProblem });
    if (!isRank(band.toRank)) problems.push({ path: `${path}/${index}/toRank`, message: rankProblem });
    else if (band.toRank < band.fromRank) {
      problems.push({ path: `${path}/${index}/toRank`, message: 'must be at least fromRank' });
    }
    if (!isRank(band.fromRank) || !isRank(band.toRank) || band.toRank < band.fromRank) return;
    const overlapped = valid.find(({ band: other }) => band.fromRank <= other.toRank && other.fromRank <= band.toRank);
    if (overlapped) {
      const { band: other, index: otherIndex } = overlapped;
      problems.push({
        path: `${path}/${index}`,
        message: `overlaps band ${otherIndex} (ranks ${other.fromRank} to ${other.toRank})`,
      });
    } else {
      valid.push({ band, index });
    }
  });
  return problems;
}

/** The band whose ranks include `rank`, if any. */
export const prizeBandFor = <B extends PrizeBand>(rank: number, bands: readonly B[]): B | undefined =>
  bands.find((band) => band.fromRank <= rank && rank <= band.toRank);

/**
 * Who wins what, in the standings' order: every fan whose competition rank falls in a band
 * wins it, so a tie on a band's last rank pays every tied fan (band 1-3, ranks 1, 2, 2, 2:
 * four winners), and a tie that starts before a band keeps its fans out of it (ranks 1, 1, 3
 * with a band 2-2: nobody wins that band).
 */
export function winners<B extends PrizeBand>(
  standings: readonly Pick<Standing, 'userId' | 'rank' | 'position'>[],
  bands: readonly B[],
): { userId: string; rank: number; band: B }[] {
  return [...standings]
    .sort((a, b) => a.position - b.position)
    .flatMap(({ userId, rank }) => {
      const band = prizeBandFor(rank, bands);
      return band ? [{ userId, rank, band }] : [];
    });
}

// --- Rounds ---------------------------------------------------------------------------------

export type RoundStatus = 'upcoming' | 'open' | 'locked' | 'final';

/**
 * The problems of a round's times, as JSON pointers under `path`: a time that is not a date,
 * opensAt not before locksAt, locksAt not before endsAt, finalizesAt (when given) before endsAt.
 */
export function validateRoundTimes(
  round: { opensAt: Date; locksAt: Date; endsAt: Date; finalizesAt?: Date | null },
  path = '',
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const fields = ['opensAt', 'locksAt', 'endsAt', 'finalizesAt'] as const;
  for (const field of fields) {
    const value = round[field];
    if (value !== undefined && value !== null && Number.isNaN(value.getTime())) {
      problems.push({ path: `${path}/${field}`, message: 'is not a date' });
    }
  }
  if (problems.length > 0) return problems;
  if (round.locksAt <= round.opensAt) problems.push({ path: `${path}/locksAt`, message: 'must be after opensAt' });
  if (round.endsAt <= round.locksAt) problems.push({ path: `${path}/endsAt`, message: 'must be after locksAt' });
  if (round.finalizesAt && round.finalizesAt < round.endsAt) {
    problems.push({ path: `${path}/finalizesAt`, message: 'must be at or after endsAt' });
  }
  return problems;
}

/**
 * Where a round stands at `now`: `final` once finalized; otherwise `upcoming` before opensAt,
 * `open` (lineups accepted) until locksAt, then `locked` (scores posted) until finalized.
 */
export function roundStatusAt(
  round: { opensAt: Date; locksAt: Date; finalizedAt: Date | null },
  now: Date,
): RoundStatus {
  if (round.finalizedAt) return 'final';
  if (now < round.opensAt) return 'upcoming';
  if (now < round.locksAt) return 'open';
  return 'locked';
}

/** Whether two rounds' play windows [locksAt, endsAt) intersect (half-open: ending as the other locks is no overlap). */
export const playOverlaps = (a: { locksAt: Date; endsAt: Date }, b: { locksAt: Date; endsAt: Date }): boolean =>
  a.locksAt < b.endsAt && b.locksAt < a.endsAt;
