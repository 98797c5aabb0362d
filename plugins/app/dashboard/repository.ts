import { sql } from 'drizzle-orm';
import type { DomainEvent } from '../../../schemas/events.js';
import type { Database } from '../database/index.js';
import { jsonb, rowsOf, textArray } from '../rows.js';
import { COUNTED_TYPES, type Figures, HOUR_FIGURES, type Rollup, TOTAL_ROW } from './rules.js';

/** SQL of the dashboard: its rollups (written by the event consumer and the rebuild) and what answers read. */

/** The name of the dashboard's event consumer (its cursor). */
export const CONSUMER = 'dashboard';

/** Any fixed key: the consumer's batches and a rebuild take it, so they never interleave. */
const ROLLUP_LOCK = 7_245_310_118;

export async function lockRollups(tx: Database): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${ROLLUP_LOCK})`);
}

/** Records the events as counted; answers the ids that were not counted before (the ones to add). */
export async function claimEvents(tx: Database, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = rowsOf<{ event_id: string | number }>(
    await tx.execute(sql`
      insert into dashboard_counted (event_id) select unnest(${sql.param(ids)}::bigint[])
      on conflict do nothing returning event_id`),
  );
  return new Set(rows.map((row) => Number(row.event_id)));
}

const COLUMNS: Record<(typeof HOUR_FIGURES)[number], string> = {
  packsSold: 'packs_sold',
  coinsTaken: 'coins_taken',
  packsOpened: 'packs_opened',
  pullsCommon: 'pulls_common',
  pullsUncommon: 'pulls_uncommon',
  pullsRare: 'pulls_rare',
  pullsEpic: 'pulls_epic',
  pullsLegendary: 'pulls_legendary',
  questCompletions: 'quest_completions',
  grants: 'grants',
  leagueEntries: 'league_entries',
};
const FIGURE_COLUMNS = HOUR_FIGURES.map((figure) => COLUMNS[figure]);

/** Adds a rollup's deltas to the stored sums, one statement per table. */
export async function addRollup(tx: Database, rollup: Rollup): Promise<void> {
  if (rollup.hours.length > 0) {
    const rows = rollup.hours.map((row) => ({
      team_id: row.teamId,
      hour: row.hour,
      pack_id: row.packId,
      ...Object.fromEntries(HOUR_FIGURES.map((figure) => [COLUMNS[figure], row[figure]])),
    }));
    await tx.execute(sql`
      insert into dashboard_hours (team_id, hour, pack_id, ${sql.raw(FIGURE_COLUMNS.join(', '))})
      select * from jsonb_to_recordset(${jsonb(rows)})
        as r(team_id text, hour timestamptz, pack_id text, ${sql.raw(FIGURE_COLUMNS.map((c) => `${c} bigint`).join(', '))})
      on conflict (team_id, hour, pack_id) do update set
        ${sql.raw(FIGURE_COLUMNS.map((c) => `${c} = dashboard_hours.${c} + excluded.${c}`).join(', '))}`);
  }
  if (rollup.buyers.length > 0) {
    const rows = rollup.buyers.map((row) => ({ team_id: row.teamId, hour: row.hour, user_id: row.userId }));
    // A fan's hours stay sorted and distinct: width_bucket needs them so.
    await tx.execute(sql`
      insert into dashboard_fan_hours (team_id, user_id, hours)
      select team_id, user_id, array_agg(distinct hour order by hour)
      from jsonb_to_recordset(${jsonb(rows)}) as r(team_id text, hour timestamptz, user_id text)
      group by team_id, user_id
      on conflict (team_id, user_id) do update set hours = (
        select array_agg(distinct h order by h) from unnest(dashboard_fan_hours.hours || excluded.hours) as u(h))`);
  }
  if (rollup.draws.length > 0) {
    const rows = rollup.draws.map((row) => ({
      pack_id: row.packId,
      collectible_id: row.collectibleId,
      team_id: row.teamId,
      draws: row.draws,
    }));
    await tx.execute(sql`
      insert into dashboard_pack_draws (pack_id, collectible_id, team_id, draws)
      select * from jsonb_to_recordset(${jsonb(rows)}) as r(pack_id text, collectible_id text, team_id text, draws bigint)
      on conflict (pack_id, collectible_id) do update set draws = dashboard_pack_draws.draws + excluded.draws`);
  }
}

/** Empties every rollup (a rebuild, in the transaction that adds the whole log back). */
export async function clearRollups(tx: Database): Promise<void> {
  // Deletes, not TRUNCATE: dashboards keep reading the old sums until the rebuild commits.
  for (const table of ['dashboard_hours', 'dashboard_fan_hours', 'dashboard_pack_draws', 'dashboard_counted'])
    await tx.execute(sql`delete from ${sql.identifier(table)}`);
}

export interface LogPosition {
  txid: string;
  eventId: number;
}

/**
 * The counted types' events after `after` in commit order, only from transactions older than
 * every one still running (the consumers' rule: see plugins/app/events/repository.ts).
 */
export async function countedEventsAfter(
  tx: Database,
  after: LogPosition,
  limit: number,
): Promise<(DomainEvent & LogPosition)[]> {
  // Named as DomainEvent names them, so a row needs only its time made a Date.
  const rows = rowsOf<DomainEvent & LogPosition & { occurredAt: string | Date }>(
    await tx.execute(sql`
      select id::text as id, id as "eventId", txid::text as txid, type, occurred_at as "occurredAt",
             user_id as "userId", team_id as "teamId", subject, data
      from events
      where (txid, id) > (${after.txid}::xid8, ${after.eventId})
        and txid < pg_snapshot_xmin(pg_current_snapshot())
        and type = any(${textArray([...COUNTED_TYPES])})
      order by txid, id limit ${limit}`),
  );
  return rows.map((row) => ({ ...row, eventId: Number(row.eventId), occurredAt: new Date(row.occurredAt) }));
}

/**
 * What the rollups include, as a time: the moment of the first event the consumer has not yet
 * handled, or now when it has handled every committed event.
 */
export async function rollupsAsOf(db: Database): Promise<Date> {
  const [row] = rowsOf<{ as_of: string | Date }>(
    await db.execute(sql`
      with c as (
        select coalesce(max(txid::text), '0')::xid8 as txid, coalesce(max(event_id), 0) as event_id
        from event_cursors where consumer = ${CONSUMER})
      select coalesce(
        (select e.occurred_at from events e, c where (e.txid, e.id) > (c.txid, c.event_id) order by e.txid, e.id limit 1),
        now()) as as_of`),
  );
  return new Date((row as { as_of: string | Date }).as_of);
}

export type DayFigures = Figures & { day: number };

/**
 * The figures of a team (or of every team: `teamId` undefined) per day of `bounds` (1-based, as
 * `width_bucket` numbers them), from the hours' total rows. An hour belongs to the day its first
 * instant falls in.
 */
export async function figuresByDay(
  db: Database,
  teamId: string | undefined,
  bounds: readonly Date[],
): Promise<DayFigures[]> {
  const sums = FIGURE_COLUMNS.map((column, index) => `sum(${column})::float8 as "${HOUR_FIGURES[index]}"`).join(', ');
  const rows = rowsOf<DayFigures>(
    await db.execute(sql`
      select width_bucket(hour, ${sql.param(bounds.map((bound) => bound.toISOString()))}::timestamptz[]) as day, ${sql.raw(sums)}
      from dashboard_hours
      where ${teamId === undefined ? sql`true` : sql`team_id = ${teamId}`} and pack_id = ${TOTAL_ROW}
        and ${hoursIn(bounds)}
      group by 1`),
  );
  return rows.map((row) => ({ ...row, day: Number(row.day) }));
}

const hoursIn = (bounds: readonly Date[]) =>
  sql`hour >= ${(bounds[0] as Date).toISOString()}::timestamptz and hour < ${(bounds[bounds.length - 1] as Date).toISOString()}::timestamptz`;

/** A team's packs sold and opened and coins taken in the hours of `bounds`, per pack. */
export async function packFigures(
  db: Database,
  teamId: string,
  bounds: readonly Date[],
): Promise<{ packId: string; packsSold: number; packsOpened: number; coinsTaken: number }[]> {
  return rowsOf(
    await db.execute(sql`
      select pack_id as "packId", sum(packs_sold)::float8 as "packsSold", sum(packs_opened)::float8 as "packsOpened",
             sum(coins_taken)::float8 as "coinsTaken"
      from dashboard_hours
      where team_id = ${teamId} and pack_id not in ('', ${TOTAL_ROW}) and ${hoursIn(bounds)}
      group by 1`),
  );
}

/**
 * The distinct buyers of a team's packs (or of any pack) in the hours of [from, to): the fans with
 * an hour in it, i.e. more of their hours before `to` than before `from` (width_bucket counts the
 * hours up to and including its first argument; a millisecond less makes that "before").
 */
export async function uniqueBuyers(db: Database, teamId: string | undefined, from: Date, to: Date): Promise<number> {
  const inRange = sql`width_bucket(${to.toISOString()}::timestamptz - interval '1 millisecond', hours)
    > width_bucket(${from.toISOString()}::timestamptz - interval '1 millisecond', hours)`;
  const [row] = rowsOf<{ buyers: number }>(
    await db.execute(
      teamId === undefined
        ? sql`select count(distinct user_id)::int as buyers from dashboard_fan_hours where ${inRange}`
        : sql`select count(*)::int as buyers from dashboard_fan_hours where team_id = ${teamId} and ${inRange}`,
    ),
  );
  return row?.buyers ?? 0;
}

/** Every copy drawn from the team's packs since they were published, per pack and collectible. */
export async function drawsOfTeam(
  db: Database,
  teamId: string,
): Promise<{ packId: string; collectibleId: string; draws: number }[]> {
  return rowsOf<{ packId: string; collectibleId: string; draws: number }>(
    await db.execute(sql`
      select pack_id as "packId", collectible_id as "collectibleId", draws::float8 as draws
      from dashboard_pack_draws where team_id = ${teamId}`),
  );
}

export interface MoneyRow {
  currency: string;
  orders: number;
  gross: number;
  refunded: number;
  disputes: number;
  disputed: number;
  coins: number;
  uncollectedCoins: number;
}

/**
 * Money of the coin orders paid in [from, to), per currency, read from the orders themselves
 * (the sales table: what has become of each, refunds and disputes included, is on its row). Store
 * orders whose store does not say what was paid (Google Play) have no amount and are not counted.
 */
export async function moneyByCurrency(db: Database, from: Date, to: Date): Promise<MoneyRow[]> {
  return rowsOf<MoneyRow>(
    await db.execute(sql`
      select currency, count(*)::int as orders, sum(amount)::float8 as gross, sum(amount_refunded)::float8 as refunded,
             count(*) filter (where status = 'disputed')::int as disputes,
             coalesce(sum(amount - amount_refunded) filter (where status = 'disputed'), 0)::float8 as disputed,
             sum(coins)::float8 as coins, sum(uncollected)::float8 as "uncollectedCoins"
      from orders
      where fulfilled_at >= ${from.toISOString()}::timestamptz and fulfilled_at < ${to.toISOString()}::timestamptz
        and amount is not null
      group by currency order by currency`),
  );
}
