import { and, asc, eq, gt, isNotNull, isNull, sql } from 'drizzle-orm';
import { type RoundStandingRow, roundStandings } from '../../../db/schema.js';
import type { Database } from '../database/index.js';

/** SQL of final rounds' standings: written once at finalization, then read by position or fan. */

export type NewStanding = Omit<RoundStandingRow, 'grantId'>;

const STANDINGS_BATCH = 10_000;

/** Writes the standings, ten thousand rows per statement (one array per column: the fastest bulk insert short of COPY). */
export async function insertStandings(tx: Database, rows: readonly NewStanding[]): Promise<void> {
  const array = (values: unknown[], type: string) => sql`${sql.param(values)}::${sql.raw(type)}[]`;
  for (let start = 0; start < rows.length; start += STANDINGS_BATCH) {
    const batch = rows.slice(start, start + STANDINGS_BATCH);
    await tx.execute(sql`
      insert into round_standings (round_id, user_id, position, rank, score, best, submitted_at, reward_id, prize_band, promised)
      select ${batch[0]?.roundId}, r.user_id, r.position, r.rank, r.score, r.best, r.submitted_at, r.reward_id, r.prize_band, r.promised
      from unnest(
        ${array(
          batch.map((row) => row.userId),
          'text',
        )},
        ${array(
          batch.map((row) => row.position),
          'integer',
        )},
        ${array(
          batch.map((row) => row.rank),
          'integer',
        )},
        ${array(
          batch.map((row) => row.score),
          'bigint',
        )},
        ${array(
          batch.map((row) => row.best),
          'bigint',
        )},
        ${array(
          batch.map((row) => row.submittedAt.toISOString()),
          'timestamptz',
        )},
        ${array(
          batch.map((row) => row.rewardId),
          'text',
        )},
        ${array(
          batch.map((row) => row.prizeBand),
          'integer',
        )},
        ${array(
          batch.map((row) => row.promised),
          'boolean',
        )}
      ) as r(user_id, position, rank, score, best, submitted_at, reward_id, prize_band, promised)`);
  }
}

/** Standings by position: `limit` rows after `afterPosition` (0 for the first). */
export function standingsAfter(db: Database, roundId: string, afterPosition: number, limit: number) {
  return db
    .select()
    .from(roundStandings)
    .where(and(eq(roundStandings.roundId, roundId), gt(roundStandings.position, afterPosition)))
    .orderBy(asc(roundStandings.position))
    .limit(limit);
}

/** Standings from position `from` to `to`, inclusive. */
export function standingsBetween(db: Database, roundId: string, from: number, to: number) {
  return db
    .select()
    .from(roundStandings)
    .where(and(eq(roundStandings.roundId, roundId), sql`${roundStandings.position} between ${from} and ${to}`))
    .orderBy(asc(roundStandings.position));
}

export async function standingOf(db: Database, roundId: string, userId: string) {
  const [row] = await db
    .select()
    .from(roundStandings)
    .where(and(eq(roundStandings.roundId, roundId), eq(roundStandings.userId, userId)));
  return row;
}

/** Winners not yet paid, by position, after `afterPosition`. */
export function unpaidWinners(tx: Database, roundId: string, afterPosition: number, limit: number) {
  return tx
    .select()
    .from(roundStandings)
    .where(
      and(
        eq(roundStandings.roundId, roundId),
        isNotNull(roundStandings.rewardId),
        isNull(roundStandings.grantId),
        gt(roundStandings.position, afterPosition),
      ),
    )
    .orderBy(asc(roundStandings.position))
    .limit(limit);
}

export async function hasUnpaidWinner(tx: Database, roundId: string): Promise<boolean> {
  return (await unpaidWinners(tx, roundId, 0, 1)).length > 0;
}

export async function setStandingGrant(tx: Database, roundId: string, userId: string, grantId: string) {
  await tx
    .update(roundStandings)
    .set({ grantId })
    .where(and(eq(roundStandings.roundId, roundId), eq(roundStandings.userId, userId)));
}
