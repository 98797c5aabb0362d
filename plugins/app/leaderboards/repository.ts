import { type SQL, sql } from 'drizzle-orm';
import type { LeaderboardRow } from '../../../db/schema.js';
import type { Database } from '../database/index.js';
import { rowsOf, textArray } from '../rows.js';
import { boardHasher, type CountDelta, countDeltas, ranksOfSlice } from './ranks.js';

/** A board as its first change creates it. */
export type BoardIdentity = Pick<LeaderboardRow, 'key' | 'kind' | 'subjectId' | 'window' | 'windowKey' | 'timeZone'>;

/** Points added to a fan's score on a board at an instant (hundredths; negative takes away). */
export interface ScoreDelta {
  board: string;
  userId: string;
  points: number;
  at: Date;
}

/** A fan on a board, as reads answer it (score in hundredths). */
export interface RankedRow {
  userId: string;
  displayName: string | null;
  score: number;
  rank: number;
  position: number | null;
}

/** Where a live page continues: the last row's place in the board's order. */
export interface LiveCursor {
  score: number;
  reachedAt: string;
  userId: string;
}

interface RankedSqlRow {
  user_id: string;
  display_name: string | null;
  score: string;
  rank: string;
  position: number | null;
  reached_at?: string;
}

const toRanked = (row: RankedSqlRow): RankedRow & { reachedAt?: string } => ({
  userId: row.user_id,
  displayName: row.display_name,
  score: Number(row.score),
  rank: Number(row.rank),
  position: row.position,
  ...(row.reached_at === undefined ? {} : { reachedAt: row.reached_at }),
});

const bigintArray = (values: readonly number[]): SQL => sql`${sql.param(values)}::bigint[]`;
const intArray = (values: readonly number[]): SQL => sql`${sql.param(values)}::integer[]`;

/** The boards named, as stored (frozen or not). */
export async function boardsByKey(db: Database, keys: readonly string[]): Promise<LeaderboardRow[]> {
  if (keys.length === 0) return [];
  const rows = rowsOf<Record<string, unknown>>(
    await db.execute(sql`
      select key, kind, subject_id, "window", window_key, time_zone, entrants, updated_at, frozen_at, hash
      from leaderboards where key = any(${textArray(keys)})`),
  );
  return rows.map((row) => ({
    key: row.key as string,
    kind: row.kind as string,
    subjectId: row.subject_id as string | null,
    window: row.window as string,
    windowKey: row.window_key as string,
    timeZone: row.time_zone as string,
    entrants: Number(row.entrants),
    updatedAt: new Date(row.updated_at as string),
    frozenAt: row.frozen_at === null ? null : new Date(row.frozen_at as string),
    hash: row.hash as string | null,
  }));
}

/**
 * Adds points to fans' scores on live boards, with the counts of the rank structure, in the
 * caller's transaction. Boards are created by their first change; a frozen board takes no
 * change (answered, so the caller can say so). One writer at a time: the consumer's cursor lock.
 */
export async function applyScoreDeltas(
  tx: Database,
  boards: readonly BoardIdentity[],
  deltas: readonly ScoreDelta[],
): Promise<{ skippedFrozen: string[] }> {
  if (deltas.length === 0) return { skippedFrozen: [] };
  await tx.execute(sql`
    insert into leaderboards (key, kind, subject_id, "window", window_key, time_zone)
    select * from unnest(${textArray(boards.map((b) => b.key))}, ${textArray(boards.map((b) => b.kind))},
      ${textArray(boards.map((b) => b.subjectId ?? ''))}, ${textArray(boards.map((b) => b.window))},
      ${textArray(boards.map((b) => b.windowKey))}, ${textArray(boards.map((b) => b.timeZone))})
      as b(key, kind, subject_id, "window", window_key, time_zone)
    on conflict (key) do nothing`);
  const stored = await lockBoards(
    tx,
    boards.map((board) => board.key),
  );
  const frozen = new Set(stored.filter((row) => row.frozen).map((row) => row.key));
  // One change per (board, fan): the batch's points summed, at its latest instant.
  const merged = new Map<string, ScoreDelta>();
  for (const delta of deltas) {
    if (frozen.has(delta.board)) continue;
    const key = `${delta.board}\u0000${delta.userId}`;
    const seen = merged.get(key);
    if (seen)
      merged.set(key, { ...seen, points: seen.points + delta.points, at: delta.at > seen.at ? delta.at : seen.at });
    else merged.set(key, { ...delta });
  }
  const changes = [...merged.values()];
  if (changes.length > 0) {
    const before = new Map(
      rowsOf<{ board: string; user_id: string; score: string }>(
        await tx.execute(sql`
          select e.board, e.user_id, e.score::text from leaderboard_entries e
          join unnest(${textArray(changes.map((c) => c.board))}, ${textArray(changes.map((c) => c.userId))}) as k(board, user_id)
            on e.board = k.board and e.user_id = k.user_id`),
      ).map((row) => [`${row.board}\u0000${row.user_id}`, Number(row.score)]),
    );
    const moves = changes.map((change) => {
      const previous = before.get(`${change.board}\u0000${change.userId}`);
      return { ...change, before: previous ?? null, after: (previous ?? 0) + change.points };
    });
    // A fan whose score did not move keeps their place among those tied with them.
    const written = moves.filter((move) => move.before !== move.after);
    if (written.length > 0) {
      await tx.execute(sql`
        insert into leaderboard_entries (board, user_id, score, reached_at)
        select * from unnest(${textArray(written.map((m) => m.board))}, ${textArray(written.map((m) => m.userId))},
          ${bigintArray(written.map((m) => m.after))}, ${sql.param(written.map((m) => m.at.toISOString()))}::timestamptz[])
        on conflict (board, user_id) do update set score = excluded.score, reached_at = excluded.reached_at`);
      await applyCountDeltas(tx, countDeltas(written));
    }
    const newcomers = new Map<string, number>();
    for (const move of moves) if (move.before === null) newcomers.set(move.board, (newcomers.get(move.board) ?? 0) + 1);
    const touched = [...new Set(moves.map((move) => move.board))];
    await tx.execute(sql`
      update leaderboards b set entrants = b.entrants + coalesce(n.fans, 0), updated_at = now()
      from unnest(${textArray(touched)}, ${intArray(touched.map((board) => newcomers.get(board) ?? 0))}) as n(key, fans)
      where b.key = n.key`);
  }
  return { skippedFrozen: [...frozen] };
}

async function lockBoards(tx: Database, keys: readonly string[]): Promise<{ key: string; frozen: boolean }[]> {
  return rowsOf<{ key: string; frozen: boolean }>(
    await tx.execute(sql`
      select key, frozen_at is not null as frozen from leaderboards
      where key = any(${textArray(keys)}) order by key for update`),
  );
}

/** Moves the counts: added buckets are upserted, emptied ones deleted (the structure stays as small as the scores held). */
async function applyCountDeltas(tx: Database, deltas: readonly CountDelta[]): Promise<void> {
  const gains = deltas.filter((delta) => delta.fans > 0);
  const losses = deltas.filter((delta) => delta.fans < 0);
  const columns = (list: readonly CountDelta[]) => sql`
    ${textArray(list.map((d) => d.board))}, ${sql.param(list.map((d) => d.level))}::smallint[],
    ${bigintArray(list.map((d) => d.bucket))}, ${intArray(list.map((d) => d.fans))}`;
  if (gains.length > 0)
    await tx.execute(sql`
      insert into leaderboard_counts (board, level, bucket, fans)
      select * from unnest(${columns(gains)}) as d(board, level, bucket, fans)
      on conflict (board, level, bucket) do update set fans = leaderboard_counts.fans + excluded.fans`);
  if (losses.length > 0)
    await tx.execute(sql`
      with d as (select * from unnest(${columns(losses)}) as d(board, level, bucket, fans)),
      moved as (
        update leaderboard_counts c set fans = c.fans + d.fans from d
        where c.board = d.board and c.level = d.level and c.bucket = d.bucket
        returning c.board, c.level, c.bucket, c.fans)
      delete from leaderboard_counts c using moved m
      where m.fans = 0 and c.board = m.board and c.level = m.level and c.bucket = m.bucket`);
}

/**
 * A row's display name, looked up by its id: a join would let the planner, which cannot know how
 * few rows a keyset range holds, hash the whole users table.
 */
const DISPLAY_NAME = (alias: string) =>
  sql.raw(`(select u.display_name from users u where u.id = ${alias}.user_id) as display_name`);

/**
 * A contiguous slice of a live board (the rows `slice` selects, in board order) with each row's
 * rank, in one statement, so the rows and the counts are of one moment. The ranks come from two
 * counts at the slice's top score (ranksOfSlice): the fans above it and the fans holding it, from
 * the rank structure by `leaderboard_rank_counts` (a PL/pgSQL function of the migrations, whose
 * plan each connection keeps: the six ranges it sums cost more to plan than to run).
 */
async function rankedSlice(db: Database, board: string, slice: SQL): Promise<(RankedRow & { reachedAt: string })[]> {
  const rows = rowsOf<Omit<RankedSqlRow, 'rank'> & { reached_at: string; above: string; tied: string }>(
    await db.execute(sql`
      with slice as (${slice})
      select p.user_id, ${DISPLAY_NAME('p')}, p.score::text, null::integer as position,
        to_char(p.reached_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as reached_at,
        c.above::text, c.tied::text
      from slice p, leaderboard_rank_counts(${board}, (select max(score) from slice)) c
      order by p.order_key, p.reached_at, p.user_id`),
  );
  const first = rows[0];
  if (!first) return [];
  const ranks = ranksOfSlice(
    rows.map((row) => Number(row.score)),
    Number(first.above),
    Number(first.tied),
  );
  return rows.map(
    (row, index) => toRanked({ ...row, rank: String(ranks[index]) }) as RankedRow & { reachedAt: string },
  );
}

/** The order of a live board (score descending, the first to reach it first, then user id), and of its keyset reads. */
const ORDER_ASC = sql`order_key, reached_at, user_id`;
const ORDER_DESC = sql`order_key desc, reached_at desc, user_id desc`;
const ENTRY = sql`user_id, score, order_key, reached_at`;

/** A page of a live board after `cursor`, best first, with each row's rank. */
export async function livePage(
  db: Database,
  board: string,
  cursor: LiveCursor | undefined,
  limit: number,
): Promise<(RankedRow & { reachedAt: string })[]> {
  const after = cursor
    ? sql`and (order_key, reached_at, user_id) > (${-cursor.score}, ${cursor.reachedAt}::timestamptz, ${cursor.userId})`
    : sql``;
  return rankedSlice(
    db,
    board,
    sql`select ${ENTRY} from leaderboard_entries where board = ${board} ${after} order by ${ORDER_ASC} limit ${limit}`,
  );
}

/**
 * A fan on a live board and up to `around` fans on each side of them, each with its rank; one
 * statement, so the ranks and the rows are of one moment. Null when the fan is not on the board.
 */
export async function liveAround(
  db: Database,
  board: string,
  userId: string,
  around: number,
): Promise<{ me: RankedRow; above: RankedRow[]; below: RankedRow[] } | null> {
  const rows = await rankedSlice(
    db,
    board,
    sql`
          with me as (select ${ENTRY} from leaderboard_entries where board = ${board} and user_id = ${userId})
          select * from me
          union all
          select e.* from me, lateral (
            select ${ENTRY} from leaderboard_entries
            where board = ${board} and (order_key, reached_at, user_id) < (me.order_key, me.reached_at, me.user_id)
            order by ${ORDER_DESC} limit ${around}) e
          union all
          select e.* from me, lateral (
            select ${ENTRY} from leaderboard_entries
            where board = ${board} and (order_key, reached_at, user_id) > (me.order_key, me.reached_at, me.user_id)
            order by ${ORDER_ASC} limit ${around}) e`,
  );
  return splitAround(rows, userId);
}

/** The rows around a fan, in board order, split at the fan. */
function splitAround(rows: RankedRow[], userId: string) {
  const index = rows.findIndex((row) => row.userId === userId);
  const me = rows[index];
  if (!me) return null;
  return { me, above: rows.slice(0, index), below: rows.slice(index + 1) };
}

/** A page of a frozen board after `afterPosition`. */
export async function frozenPage(
  db: Database,
  board: string,
  afterPosition: number,
  limit: number,
): Promise<RankedRow[]> {
  return rowsOf<RankedSqlRow>(
    await db.execute(sql`
      select f.user_id, ${DISPLAY_NAME('f')}, f.score::text, f.rank::text, f.position
      from leaderboard_frozen_rows f
      where f.board = ${board} and f.position > ${afterPosition} order by f.position limit ${limit}`),
  ).map(toRanked);
}

/** A fan's place on a frozen board (null when not on it). */
export async function positionOf(db: Database, board: string, userId: string): Promise<number | null> {
  const [row] = rowsOf<{ position: number }>(
    await db.execute(sql`select position from leaderboard_frozen_rows where board = ${board} and user_id = ${userId}`),
  );
  return row?.position ?? null;
}

/** A fan on a frozen board and the rows `around` positions on each side. */
export async function frozenAround(
  db: Database,
  board: string,
  userId: string,
  around: number,
): Promise<{ me: RankedRow; above: RankedRow[]; below: RankedRow[] } | null> {
  // Two statements on rows that never change: with the bounds as values the planner knows the
  // range holds a few rows (taken from a subquery, it guesses a ninth of the board and compiles
  // the plan with JIT, 300 ms).
  const position = await positionOf(db, board, userId);
  if (position === null) return null;
  const rows = rowsOf<RankedSqlRow>(
    await db.execute(sql`
      select f.user_id, ${DISPLAY_NAME('f')}, f.score::text, f.rank::text, f.position
      from leaderboard_frozen_rows f
      where f.board = ${board} and f.position between ${position - around} and ${position + around}
      order by f.position`),
  ).map(toRanked);
  return splitAround(rows, userId);
}

/** Rows one statement of a freeze reads and writes: each stays well within the timeouts. */
const FREEZE_CHUNK = 20_000;

/**
 * Freezes a board: its rows ranked once in board order, their hash, and the board closed to
 * change; in the caller's transaction, which holds the board's row (the consumer takes it before
 * writing). The board is walked in order a chunk at a time, positions and competition ranks
 * counted along, so no statement ranks a million rows at once. Answers the hash (the stored one
 * when the board was frozen already).
 */
export async function freezeBoard(tx: Database, key: string): Promise<string | null> {
  const [row] = rowsOf<{ hash: string | null }>(
    await tx.execute(sql`select hash from leaderboards where key = ${key} for update`),
  );
  if (!row) return null;
  if (row.hash) return row.hash;
  const hasher = boardHasher();
  let position = 0;
  let rank = 0;
  let lastScore: number | undefined;
  let cursor: LiveCursor | undefined;
  for (;;) {
    const after = cursor
      ? sql`and (order_key, reached_at, user_id) > (${-cursor.score}, ${cursor.reachedAt}::timestamptz, ${cursor.userId})`
      : sql``;
    const rows = rowsOf<{ user_id: string; score: string; reached_at: string }>(
      await tx.execute(sql`
        select user_id, score::text, to_char(reached_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as reached_at
        from leaderboard_entries where board = ${key} ${after} order by ${ORDER_ASC} limit ${FREEZE_CHUNK}`),
    );
    const last = rows[rows.length - 1];
    if (!last) break;
    const frozen = rows.map((entry) => {
      const score = Number(entry.score);
      position++;
      if (score !== lastScore) {
        rank = position;
        lastScore = score;
      }
      const line = { position, rank, userId: entry.user_id, score };
      hasher.add(line);
      return line;
    });
    await tx.execute(sql`
      insert into leaderboard_frozen_rows (board, position, rank, user_id, score)
      select ${key}, * from unnest(${intArray(frozen.map((f) => f.position))}, ${intArray(frozen.map((f) => f.rank))},
        ${textArray(frozen.map((f) => f.userId))}, ${bigintArray(frozen.map((f) => f.score))})`);
    cursor = { score: Number(last.score), reachedAt: last.reached_at, userId: last.user_id };
    if (rows.length < FREEZE_CHUNK) break;
  }
  const hash = hasher.digest();
  await tx.execute(sql`update leaderboards set frozen_at = now(), hash = ${hash} where key = ${key}`);
  return hash;
}

/** Live boards of a kind and window (what the freeze job looks at). */
export async function openBoards(db: Database, kind: string, window: string): Promise<LeaderboardRow[]> {
  const keys = rowsOf<{ key: string }>(
    await db.execute(sql`
      select key from leaderboards where kind = ${kind} and "window" = ${window} and frozen_at is null order by key limit 1000`),
  ).map((row) => row.key);
  return boardsByKey(db, keys);
}
