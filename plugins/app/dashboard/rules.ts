import type { DomainEvent } from '../../../schemas/events.js';
import type { Rarity } from '../../../schemas/enums.js';

/**
 * What each event adds to the dashboard's rollups, as a pure function of a batch of events:
 * sums per (team, UTC hour, pack), the buyers of each hour, and the copies drawn per pack and
 * collectible. The repository adds these to what is stored.
 */

/** The event types the rollups count; every other event adds nothing and is not recorded. */
export const COUNTED_TYPES = new Set<DomainEvent['type']>([
  'purchase.completed',
  'pack.opened',
  'quest.completed',
  'reward.granted',
  'round.finalized',
]);

/** The figures of one (team, hour, pack) row. */
export const HOUR_FIGURES = [
  'packsSold',
  'coinsTaken',
  'packsOpened',
  'pullsCommon',
  'pullsUncommon',
  'pullsRare',
  'pullsEpic',
  'pullsLegendary',
  'questCompletions',
  'grants',
  'leagueEntries',
] as const;
export type HourFigure = (typeof HOUR_FIGURES)[number];
export type Figures = Record<HourFigure, number>;

export const PULL_FIGURE: Record<Rarity, HourFigure> = {
  common: 'pullsCommon',
  uncommon: 'pullsUncommon',
  rare: 'pullsRare',
  epic: 'pullsEpic',
  legendary: 'pullsLegendary',
};

/** The `packId` of a (team, hour)'s total row: every figure of the hour, packs and others together. */
export const TOTAL_ROW = '*';

export interface HourDelta extends Figures {
  teamId: string;
  /** The UTC hour, ISO. */
  hour: string;
  /** '' for figures of no pack; TOTAL_ROW for the hour's total. */
  packId: string;
}

export interface Rollup {
  hours: HourDelta[];
  buyers: { teamId: string; hour: string; userId: string }[];
  draws: { packId: string; collectibleId: string; teamId: string; draws: number }[];
}

export const zeroFigures = (): Figures => Object.fromEntries(HOUR_FIGURES.map((figure) => [figure, 0])) as Figures;

const MS_PER_HOUR = 3_600_000;
/** The UTC hour an instant falls in. */
export const hourOf = (at: Date): string =>
  new Date(Math.floor(at.getTime() / MS_PER_HOUR) * MS_PER_HOUR).toISOString();

/** Sums a batch of events (those already counted left out by the caller) into rollup deltas. */
export function rollupOf(events: readonly DomainEvent[]): Rollup {
  const hours = new Map<string, HourDelta>();
  const buyers = new Map<string, Rollup['buyers'][number]>();
  const draws = new Map<string, Rollup['draws'][number]>();
  const row = (teamId: string, hour: string, packId: string): HourDelta => {
    const key = `${teamId}\n${hour}\n${packId}`;
    let found = hours.get(key);
    if (!found) {
      found = { teamId, hour, packId, ...zeroFigures() };
      hours.set(key, found);
    }
    return found;
  };
  for (const event of events) {
    const teamId = event.teamId ?? '';
    const hour = hourOf(event.occurredAt);
    switch (event.type) {
      case 'purchase.completed': {
        const figures = row(teamId, hour, event.data.packId);
        figures.packsSold += 1;
        figures.coinsTaken += event.data.price;
        if (event.userId) buyers.set(`${teamId}\n${hour}\n${event.userId}`, { teamId, hour, userId: event.userId });
        break;
      }
      case 'pack.opened': {
        const figures = row(teamId, hour, event.data.packId);
        figures.packsOpened += 1;
        for (const pull of event.data.pulls) {
          // The event schema types rarity as a string; the append checked it is one of RARITIES.
          figures[PULL_FIGURE[pull.rarity as Rarity]] += 1;
          const key = `${event.data.packId}\n${pull.collectibleId}`;
          const drawn = draws.get(key);
          if (drawn) drawn.draws += 1;
          else draws.set(key, { packId: event.data.packId, collectibleId: pull.collectibleId, teamId, draws: 1 });
        }
        break;
      }
      case 'quest.completed':
        row(teamId, hour, '').questCompletions += 1;
        break;
      case 'reward.granted':
        row(teamId, hour, '').grants += 1;
        break;
      case 'round.finalized':
        row(teamId, hour, '').leagueEntries += event.data.entrants;
        break;
      default:
        break;
    }
  }
  // Each (team, hour) also gets its total row: a series or a total reads one row an hour, not one per pack.
  for (const delta of [...hours.values()]) {
    const total = row(delta.teamId, delta.hour, TOTAL_ROW);
    for (const figure of HOUR_FIGURES) total[figure] += delta[figure];
  }
  return { hours: [...hours.values()], buyers: [...buyers.values()], draws: [...draws.values()] };
}
