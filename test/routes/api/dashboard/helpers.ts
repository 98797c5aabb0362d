import { sql } from 'drizzle-orm';
import type { App } from '../../../../app.js';
import { bearer } from '../../../support/app.js';
import { sqlRows } from '../../../support/economy.js';

/** Reading the dashboards through the API, and the figures they must equal read from the sales tables. */

export function teamDashboard(app: App, token: string | null, teamId: string, query: Record<string, string> = {}) {
  return app.inject({
    method: 'GET',
    url: `/api/admin/teams/${encodeURIComponent(teamId)}/dashboard`,
    query,
    headers: token ? bearer(token) : {},
  });
}

export function platformDashboard(app: App, token: string | null, query: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url: '/api/admin/dashboard', query, headers: token ? bearer(token) : {} });
}

/** Every event readable now, added to the rollups. */
export const drainDashboard = (app: App) => app.dashboard.consumer.catchUp();

/** A team's sales as the purchases, the ledger, the opens and the pulls hold them. */
export async function salesOfTeam(app: App, teamId: string) {
  const [row] = await sqlRows<{ sold: number; coins: number; buyers: number; opened: number; pulls: number }>(
    app,
    sql`select (select count(*)::int from purchases p join packs k on k.id = p.pack_id
                where k.team_id = ${teamId} and p.status = 'completed') as sold,
               (select coalesce(-sum(l.amount), 0)::int from wallet_ledger l join purchases p on p.id = l.reference
                join packs k on k.id = p.pack_id where l.kind = 'purchase' and k.team_id = ${teamId}) as coins,
               (select count(distinct p.user_id)::int from purchases p join packs k on k.id = p.pack_id
                where k.team_id = ${teamId} and p.status = 'completed') as buyers,
               (select count(*)::int from pack_opens o join packs k on k.id = o.pack_id where k.team_id = ${teamId}) as opened,
               (select count(*)::int from pulls l join packs k on k.id = l.pack_id where k.team_id = ${teamId}) as pulls`,
  );
  return row as { sold: number; coins: number; buyers: number; opened: number; pulls: number };
}

export const totalPulls = (pulls: Record<string, number>) => Object.values(pulls).reduce((sum, n) => sum + n, 0);
