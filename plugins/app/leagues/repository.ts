import { and, asc, desc, eq, inArray, isNotNull, isNull, lte, type SQL, sql } from 'drizzle-orm';
import {
  type LeagueRow,
  leagueRounds,
  leagues,
  lineupEntries,
  lineups,
  type RoundRow,
  roundScores,
} from '../../../db/schema.js';
import type { Rarity } from '../../../schemas/enums.js';
import type { Database } from '../database/index.js';
import { afterCursor, type PageRequest, toPage } from '../pagination.js';
import { jsonb, rowsOf, textArray } from '../rows.js';

/** SQL of leagues, rounds, lineups and scores (standings: standings-repository.ts). Writes run inside the caller's transaction. */

// --- Leagues ------------------------------------------------------------------------------------

export async function insertLeague(tx: Database, row: typeof leagues.$inferInsert): Promise<LeagueRow> {
  const [created] = await tx.insert(leagues).values(row).returning();
  return created as LeagueRow;
}

export async function findLeague(db: Database, id: string, options: { lock?: boolean } = {}) {
  const query = db.select().from(leagues).where(eq(leagues.id, id));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

export async function updateLeague(tx: Database, id: string, changes: Partial<typeof leagues.$inferInsert>) {
  const [row] = await tx.update(leagues).set(changes).where(eq(leagues.id, id)).returning();
  return row as LeagueRow;
}

/** Newest first. */
export async function listLeagues(db: Database, filters: { teamId?: string }, page: PageRequest) {
  const conditions: SQL[] = [];
  if (filters.teamId !== undefined) conditions.push(eq(leagues.teamId, filters.teamId));
  const rows = await db
    .select()
    .from(leagues)
    .where(and(...conditions, afterCursor(leagues.createdAt, leagues.id, page.after)))
    .orderBy(desc(leagues.createdAt), desc(leagues.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.createdAt, id: row.id }));
}

/** Whether a round of the league has locked (by the database's clock) or is final. */
export async function hasLockedRound(tx: Database, leagueId: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: leagueRounds.id })
    .from(leagueRounds)
    .where(
      and(
        eq(leagueRounds.leagueId, leagueId),
        sql`(${leagueRounds.locksAt} <= clock_timestamp() or ${leagueRounds.finalizedAt} is not null)`,
      ),
    )
    .limit(1);
  return row !== undefined;
}

// --- Rounds -------------------------------------------------------------------------------------

export async function insertRound(tx: Database, row: typeof leagueRounds.$inferInsert): Promise<RoundRow> {
  const [created] = await tx.insert(leagueRounds).values(row).returning();
  return created as RoundRow;
}

/** The round (of the league, when named), optionally locked FOR SHARE or FOR UPDATE. */
export async function findRound(
  db: Database,
  id: string,
  options: { leagueId?: string; lock?: 'share' | 'update' } = {},
): Promise<RoundRow | undefined> {
  const query = db
    .select()
    .from(leagueRounds)
    .where(and(eq(leagueRounds.id, id), options.leagueId ? eq(leagueRounds.leagueId, options.leagueId) : undefined));
  const [row] = options.lock ? await query.for(options.lock === 'share' ? 'share' : 'update') : await query;
  return row;
}

export async function updateRound(tx: Database, id: string, changes: Partial<typeof leagueRounds.$inferInsert>) {
  const [row] = await tx.update(leagueRounds).set(changes).where(eq(leagueRounds.id, id)).returning();
  return row as RoundRow;
}

/** A league's rounds, latest opening first. */
export async function listRounds(db: Database, leagueId: string, page: PageRequest) {
  const rows = await db
    .select()
    .from(leagueRounds)
    .where(and(eq(leagueRounds.leagueId, leagueId), afterCursor(leagueRounds.opensAt, leagueRounds.id, page.after)))
    .orderBy(desc(leagueRounds.opensAt), desc(leagueRounds.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ at: row.opensAt, id: row.id }));
}

/** The database's clock now, to the millisecond (truncated, so it is before an instant it precedes). */
export async function databaseNow(tx: Database): Promise<Date> {
  const [row] = rowsOf<{ now: Date | string }>(
    await tx.execute(sql`select date_trunc('milliseconds', clock_timestamp()) as now`),
  );
  return new Date(row?.now as Date | string);
}

/** Records each unfinalized round's status as its times say now (listings; the rules use the times). */
export async function materializeStatuses(db: Database): Promise<number> {
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`
      update league_rounds set status = s.status, updated_at = now()
      from (select id, case when now() < opens_at then 'upcoming' when now() < locks_at then 'open' else 'locked' end as status
            from league_rounds where finalized_at is null) s
      where league_rounds.id = s.id and league_rounds.status <> s.status
      returning league_rounds.id`),
  );
  return rows.length;
}

/** Rounds not final whose finalizesAt has passed. */
export async function dueRounds(db: Database, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: leagueRounds.id })
    .from(leagueRounds)
    .where(and(isNull(leagueRounds.finalizedAt), lte(leagueRounds.finalizesAt, sql`now()`)))
    .orderBy(asc(leagueRounds.finalizesAt))
    .limit(limit);
  return rows.map((row) => row.id);
}

/** Final rounds whose prizes are not all paid. */
export async function unpaidRounds(db: Database, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: leagueRounds.id })
    .from(leagueRounds)
    .where(and(isNotNull(leagueRounds.finalizedAt), isNull(leagueRounds.prizesPaidAt)))
    .orderBy(asc(leagueRounds.finalizedAt))
    .limit(limit);
  return rows.map((row) => row.id);
}

/** How many of a league's rounds are not final: of a season, or locking within [from, to). */
export async function countUnfinishedRounds(
  db: Database,
  leagueId: string,
  filter: { season: string } | { locksFrom: Date; locksBefore: Date },
): Promise<number> {
  const within =
    'season' in filter
      ? sql`season = ${filter.season}`
      : sql`locks_at >= ${filter.locksFrom} and locks_at < ${filter.locksBefore}`;
  const [row] = rowsOf<{ count: number }>(
    await db.execute(sql`
      select count(*)::int as count from league_rounds
      where league_id = ${leagueId} and finalized_at is null and ${within}`),
  );
  return row?.count ?? 0;
}

// --- Lineups ------------------------------------------------------------------------------------

/**
 * Serialises one fan's lineup edits (of any round) until the transaction ends: two edits of one
 * lineup, and two rounds racing for one of the fan's copies, take turns.
 */
export async function lockFanLineups(tx: Database, userId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`league-lineups:${userId}`}, 0))`);
}

export interface StoredEntry {
  position: number;
  pullId: string;
  collectibleId: string;
  rarity: Rarity;
}

export async function findLineup(db: Database, roundId: string, userId: string) {
  const [lineup] = await db
    .select()
    .from(lineups)
    .where(and(eq(lineups.roundId, roundId), eq(lineups.userId, userId)));
  if (!lineup) return undefined;
  const entries = await db
    .select({
      position: lineupEntries.position,
      pullId: lineupEntries.pullId,
      collectibleId: lineupEntries.collectibleId,
      rarity: lineupEntries.rarity,
    })
    .from(lineupEntries)
    .where(and(eq(lineupEntries.roundId, roundId), eq(lineupEntries.userId, userId)))
    .orderBy(asc(lineupEntries.position));
  return { lineup, entries: entries as StoredEntry[] };
}

/**
 * Locks FOR SHARE the other rounds whose lineups hold any of `pullIds`, in id order: a change of
 * their play window (FOR UPDATE) then waits for this lineup, or this lineup reads the new window.
 */
export async function lockRoundsHolding(tx: Database, pullIds: readonly string[], exceptRoundId: string) {
  if (pullIds.length === 0) return;
  await tx.execute(sql`
    select r.id from league_rounds r
    where r.id in (select e.round_id from lineup_entries e where e.pull_id = any(${textArray(pullIds)}) and e.round_id <> ${exceptRoundId})
    order by r.id
    for share`);
}

/**
 * The copies among `pullIds` that sit in a lineup of another round whose play window
 * [locksAt, endsAt) overlaps [locksAt, endsAt) given.
 */
export async function overlappingUses(
  db: Database,
  pullIds: readonly string[],
  window: { roundId: string; locksAt: Date; endsAt: Date },
): Promise<{ pullId: string; roundId: string }[]> {
  if (pullIds.length === 0) return [];
  return db
    .select({ pullId: lineupEntries.pullId, roundId: lineupEntries.roundId })
    .from(lineupEntries)
    .innerJoin(leagueRounds, eq(leagueRounds.id, lineupEntries.roundId))
    .where(
      and(
        sql`${lineupEntries.pullId} = any(${textArray(pullIds)})`,
        sql`${lineupEntries.roundId} <> ${window.roundId}`,
        sql`${leagueRounds.locksAt} < ${window.endsAt}`,
        sql`${window.locksAt} < ${leagueRounds.endsAt}`,
      ),
    );
}

/** Every copy of the round's lineups that another round overlapping `window` also holds. */
export async function windowConflicts(
  db: Database,
  window: { roundId: string; locksAt: Date; endsAt: Date },
): Promise<{ pullId: string; roundId: string }[]> {
  return rowsOf<{ pullId: string; roundId: string }>(
    await db.execute(sql`
      select o.pull_id as "pullId", o.round_id as "roundId"
      from lineup_entries e
      join lineup_entries o on o.pull_id = e.pull_id and o.round_id <> e.round_id
      join league_rounds r on r.id = o.round_id
      where e.round_id = ${window.roundId} and r.locks_at < ${window.endsAt} and ${window.locksAt} < r.ends_at
      limit 20`),
  );
}

/** Replaces the fan's lineup of the round with `entries`. */
export async function saveLineup(
  tx: Database,
  key: { roundId: string; userId: string },
  entries: readonly StoredEntry[],
  times: { submittedAt: Date; updatedAt: Date },
): Promise<void> {
  await tx
    .insert(lineups)
    .values({ ...key, ...times })
    .onConflictDoUpdate({ target: [lineups.roundId, lineups.userId], set: times });
  await tx
    .delete(lineupEntries)
    .where(and(eq(lineupEntries.roundId, key.roundId), eq(lineupEntries.userId, key.userId)));
  if (entries.length > 0) await tx.insert(lineupEntries).values(entries.map((entry) => ({ ...key, ...entry })));
}

/** Every lineup's copies of the round, for scoring: one row per copy. */
export async function lineupCopies(db: Database, roundId: string) {
  return db
    .select({
      userId: lineups.userId,
      submittedAt: lineups.submittedAt,
      collectibleId: lineupEntries.collectibleId,
      rarity: lineupEntries.rarity,
    })
    .from(lineups)
    .leftJoin(lineupEntries, and(eq(lineupEntries.roundId, lineups.roundId), eq(lineupEntries.userId, lineups.userId)))
    .where(eq(lineups.roundId, roundId));
}

// --- Scores -------------------------------------------------------------------------------------

export async function scoresOf(db: Database, roundId: string, collectibleIds?: readonly string[]) {
  if (collectibleIds?.length === 0) return [];
  return db
    .select({ collectibleId: roundScores.collectibleId, score: roundScores.score })
    .from(roundScores)
    .where(
      and(
        eq(roundScores.roundId, roundId),
        collectibleIds ? inArray(roundScores.collectibleId, [...collectibleIds]) : undefined,
      ),
    )
    .orderBy(asc(roundScores.collectibleId));
}

export async function upsertScores(
  tx: Database,
  roundId: string,
  scores: readonly { collectibleId: string; score: number }[],
  at: Date,
): Promise<void> {
  await tx.execute(sql`
    insert into round_scores (round_id, collectible_id, score, updated_at)
    select ${roundId}, s.collectible_id, s.score, ${at}
    from jsonb_to_recordset(${jsonb(scores.map((s) => ({ collectible_id: s.collectibleId, score: s.score })))})
      as s(collectible_id text, score integer)
    on conflict (round_id, collectible_id) do update set score = excluded.score, updated_at = excluded.updated_at
    where round_scores.score <> excluded.score`);
}

export async function countScores(db: Database, roundId: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(roundScores)
    .where(eq(roundScores.roundId, roundId));
  return row?.count ?? 0;
}
