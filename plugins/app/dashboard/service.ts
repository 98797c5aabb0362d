import type { DashboardQuery, PlatformDashboard, TeamDashboard } from '../../../schemas/dashboard.js';
import type { AdminPackSummary } from '../../../schemas/packs.js';
import { authorize, forbidden, type Principal, requireAdminAccess, teamNotFound } from '../auth/policy.js';
import type { DatabaseHandle } from '../database/index.js';
import type { PacksService } from '../packs/service.js';
import type { TeamsService } from '../teams/service.js';
import { remembered } from '../remembered.js';
import { type DayRange, resolveRange } from './range.js';
import { drawsOfTeam, figuresByDay, moneyByCurrency, packFigures, rollupsAsOf, uniqueBuyers } from './repository.js';
import { applyEvents, rebuildRollups } from './rollups.js';
import { type Figures, zeroFigures } from './rules.js';
import { drawFrequencies, type PackDraw, packView, seriesOf, shownFigures } from './views.js';

/** The admin pack list's largest page. */
const PACK_PAGE = 200;
/** Distinct (dashboard, team, range, zone) answers kept at once. */
const ANSWERS_KEPT = 1_000;

export function createDashboardService(deps: {
  db: DatabaseHandle;
  packs: Pick<PacksService, 'listAdmin' | 'getAdmin'>;
  teams: Pick<TeamsService, 'get'>;
  /** How long an answer is reused for the same team, range and zone (0: never): it carries its `asOf`. */
  cacheMs: number;
}) {
  const { db, packs, teams, cacheMs } = deps;

  /** Every pack of the team, page after page (the admin list, as the caller may read it). */
  async function teamPacks(principal: Principal, teamId: string): Promise<AdminPackSummary[]> {
    const found: AdminPackSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await packs.listAdmin(principal, { teamId, limit: PACK_PAGE, ...(cursor ? { cursor } : {}) });
      found.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return found;
  }

  /** The pool of each pack with draws, and its draw frequencies against it. */
  async function frequenciesOf(principal: Principal, drawn: readonly (PackDraw & { packId: string })[]) {
    const byPack = new Map<string, PackDraw[]>();
    for (const row of drawn) byPack.set(row.packId, [...(byPack.get(row.packId) ?? []), row]);
    const entries = await Promise.all(
      [...byPack].map(async ([packId, rows]) => {
        const pack = await packs.getAdmin(principal, packId);
        return [packId, drawFrequencies(pack.pool, rows)] as const;
      }),
    );
    return new Map(entries);
  }

  const teamAnswer = remembered(cacheMs, ANSWERS_KEPT, (_key, principal: Principal, teamId: string, range: DayRange) =>
    teamDashboard(principal, teamId, range),
  );
  const platformAnswer = remembered(cacheMs, ANSWERS_KEPT, (_key, range: DayRange) => platformDashboard(range));

  return {
    /** Adds a batch of the event log to the rollups (the consumer's handler). */
    handle: applyEvents,

    /** Recomputes every rollup from the event log (see rollups.ts). */
    rebuild: () => rebuildRollups(db.orm),

    /**
     * A team's dashboard: its members (viewers and up) and platform admins. Every reader allowed
     * sees the same answer, so once the caller is authorized, an answer of the last `cacheMs`
     * for the same range and zone is reused (and concurrent identical reads share one).
     */
    async team(principal: Principal, teamId: string, query: DashboardQuery): Promise<TeamDashboard> {
      requireAdminAccess(principal);
      authorize(principal, 'catalog:read', { teamId }, teamNotFound);
      const range = resolveRange(query, new Date());
      await teams.get(teamId);
      return teamAnswer(keyOf(teamId, range), principal, teamId, range);
    },

    /** The platform's dashboard: every team's figures together, and money per currency. Platform admins. */
    async platform(principal: Principal, query: DashboardQuery): Promise<PlatformDashboard> {
      if (!principal.isAdmin) throw forbidden();
      const range = resolveRange(query, new Date());
      return platformAnswer(keyOf('', range), range);
    },
  };

  async function teamDashboard(principal: Principal, teamId: string, range: DayRange): Promise<TeamDashboard> {
    const from = range.bounds[0] as Date;
    const to = range.bounds[range.bounds.length - 1] as Date;
    const [asOf, rows, perPack, buyers, drawn, teamPackList] = await Promise.all([
      rollupsAsOf(db.orm),
      figuresByDay(db.orm, teamId, range.bounds),
      packFigures(db.orm, teamId, range.bounds),
      uniqueBuyers(db.orm, teamId, from, to),
      drawsOfTeam(db.orm, teamId),
      teamPacks(principal, teamId),
    ]);
    const frequencies = await frequenciesOf(principal, drawn);
    const { series, total } = seriesOf(range, rows);
    const byPack = new Map(perPack.map((row) => [row.packId, { ...zeroFigures(), ...row }]));
    return {
      teamId,
      ...answerOf(range, asOf, total, buyers),
      series,
      packs: teamPackList.map((pack) => packView(pack, byPack.get(pack.id) ?? zeroFigures(), frequencies.get(pack.id))),
    };
  }

  async function platformDashboard(range: DayRange): Promise<PlatformDashboard> {
    const from = range.bounds[0] as Date;
    const to = range.bounds[range.bounds.length - 1] as Date;
    const [asOf, rows, buyers, money] = await Promise.all([
      rollupsAsOf(db.orm),
      figuresByDay(db.orm, undefined, range.bounds),
      uniqueBuyers(db.orm, undefined, from, to),
      moneyByCurrency(db.orm, from, to),
    ]);
    const { series, total } = seriesOf(range, rows);
    return {
      ...answerOf(range, asOf, total, buyers),
      series,
      money: money.map((row) => ({ ...row, net: row.gross - row.refunded - row.disputed })),
    };
  }
}

/** A dashboard's cache key: whose, and the range as resolved (its first and last instants and zone). */
const keyOf = (teamId: string, range: DayRange) =>
  JSON.stringify([
    teamId,
    range.timeZone,
    (range.bounds[0] as Date).getTime(),
    (range.bounds.at(-1) as Date).getTime(),
  ]);

/** What both dashboards answer first: the range as resolved, how far the rollups reach, the totals. */
function answerOf(range: DayRange, asOf: Date, total: Figures, uniqueBuyers: number) {
  return {
    from: range.from,
    to: range.to,
    timeZone: range.timeZone,
    asOf: asOf.toISOString(),
    totals: { ...shownFigures(total), uniqueBuyers },
  };
}

export type DashboardService = ReturnType<typeof createDashboardService>;
