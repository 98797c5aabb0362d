import type { AdminPack, AdminPackSummary } from '../../../schemas/packs.js';
import type { Rarity } from '../../../schemas/enums.js';
import { RARITIES } from '../../../schemas/enums.js';
import { chiSquareFit, type FitTest } from './fairness.js';
import type { DayRange } from './range.js';
import { type Figures, HOUR_FIGURES, zeroFigures } from './rules.js';

/** How rollup sums become the answer: pure. */

const HOUR_MS = 3_600_000;

export const addFigures = (into: Figures, from: Figures): Figures => {
  for (const figure of HOUR_FIGURES) into[figure] += Number(from[figure]);
  return into;
};

/** The figures as the API names them. */
export function shownFigures(figures: Figures) {
  return {
    packsSold: figures.packsSold,
    packsOpened: figures.packsOpened,
    coinsTaken: figures.coinsTaken,
    pulls: {
      common: figures.pullsCommon,
      uncommon: figures.pullsUncommon,
      rare: figures.pullsRare,
      epic: figures.pullsEpic,
      legendary: figures.pullsLegendary,
    },
    questCompletions: figures.questCompletions,
    grants: figures.grants,
    leagueEntries: figures.leagueEntries,
  };
}

/** Sums per day (1-based, as width_bucket numbers them) into the series, every day of the range present. */
export function seriesOf(range: DayRange, rows: readonly (Figures & { day: number })[]) {
  const days = range.days.map(() => zeroFigures());
  for (const row of rows) {
    const day = days[row.day - 1];
    if (day) addFigures(day, row);
  }
  const total = zeroFigures();
  for (const day of days) addFigures(total, day);
  const series = range.days.map((date, index) => {
    const startsAt = range.bounds[index] as Date;
    const endsAt = range.bounds[index + 1] as Date;
    return {
      date,
      startsAt: startsAt.toISOString(),
      hours: Math.round((endsAt.getTime() - startsAt.getTime()) / HOUR_MS),
      ...shownFigures(days[index] as Figures),
    };
  });
  return { series, total };
}

export interface PackDraw {
  collectibleId: string;
  draws: number;
}

/**
 * A pack's draw frequencies against its pool as published: each entry's chance per draw is
 * weight x copies it was published with (those left plus those drawn), over the sum; docs/dashboard.md
 * says why this holds for equal weights and what it approximates otherwise.
 */
export function drawFrequencies(pool: AdminPack['pool'], drawn: readonly PackDraw[]) {
  const observed = new Map(drawn.map((row) => [row.collectibleId, row.draws]));
  const published = pool.map((entry) => ({
    entry,
    observed: observed.get(entry.collectibleId) ?? 0,
    share: entry.weight * (entry.remaining + (observed.get(entry.collectibleId) ?? 0)),
  }));
  const totalShare = published.reduce((sum, row) => sum + row.share, 0);
  const totalDraws = drawn.reduce((sum, row) => sum + row.draws, 0);
  const inPool = new Set(pool.map((entry) => entry.collectibleId));
  const draws = [
    ...published.map((row) => ({
      collectibleId: row.entry.collectibleId,
      name: row.entry.name,
      rarity: row.entry.rarity,
      observed: row.observed,
      observedShare: totalDraws > 0 ? row.observed / totalDraws : 0,
      expectedShare: totalShare > 0 ? row.share / totalShare : 0,
    })),
    ...drawn
      .filter((row) => !inPool.has(row.collectibleId))
      .map((row) => ({
        collectibleId: row.collectibleId,
        name: null,
        rarity: null,
        observed: row.draws,
        observedShare: totalDraws > 0 ? row.draws / totalDraws : 0,
        expectedShare: null,
      })),
  ];
  const byRarity = new Map<Rarity, { observed: number; share: number }>();
  for (const row of published) {
    const found = byRarity.get(row.entry.rarity) ?? { observed: 0, share: 0 };
    found.observed += row.observed;
    found.share += row.share;
    byRarity.set(row.entry.rarity, found);
  }
  const rarities = RARITIES.filter((rarity) => byRarity.has(rarity)).map((rarity) => {
    const found = byRarity.get(rarity) as { observed: number; share: number };
    return { rarity, observed: found.observed, expectedShare: totalShare > 0 ? found.share / totalShare : 0 };
  });
  const fit = (test: FitTest | undefined) => test ?? null;
  return {
    draws,
    rarities,
    fairness: {
      byCollectible: fit(
        chiSquareFit(
          published.map((row) => row.observed),
          published.map((row) => row.share),
        ),
      ),
      byRarity: fit(
        chiSquareFit(
          rarities.map((row) => row.observed),
          rarities.map((row) => row.expectedShare),
        ),
      ),
    },
  };
}

/** One pack of the team dashboard. */
export function packView(
  pack: AdminPackSummary,
  inRange: Figures,
  frequencies: ReturnType<typeof drawFrequencies> | undefined,
) {
  return {
    packId: pack.id,
    name: pack.name,
    status: pack.status,
    available: pack.available,
    sold: inRange.packsSold,
    opened: inRange.packsOpened,
    coinsTaken: inRange.coinsTaken,
    soldAllTime: pack.sold,
    ...(frequencies ?? { draws: [], rarities: [], fairness: { byCollectible: null, byRarity: null } }),
  };
}
