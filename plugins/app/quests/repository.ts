import { and, desc, eq, gt, isNull, lte, or, type SQL, sql } from 'drizzle-orm';
import { type QuestProgressRow, type QuestRow, questProgress, quests } from '../../../db/schema.js';
import type { QuestStatus } from '../../../schemas/enums.js';
import type { Database } from '../database/index.js';
import { afterCursor, type PageRequest, toPage } from '../pagination.js';
import { jsonb, rowsOf, textArray } from '../rows.js';

/** SQL of quests, their progress and claims. Writes run inside the caller's transaction. */

export async function insertQuest(tx: Database, row: typeof quests.$inferInsert): Promise<QuestRow> {
  const [created] = await tx.insert(quests).values(row).returning();
  return created as QuestRow;
}

export async function findQuest(db: Database, id: string, options: { lock?: boolean } = {}) {
  const query = db.select().from(quests).where(eq(quests.id, id));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

export async function updateQuest(
  tx: Database,
  id: string,
  changes: Partial<typeof quests.$inferInsert>,
): Promise<QuestRow | undefined> {
  const [row] = await tx.update(quests).set(changes).where(eq(quests.id, id)).returning();
  return row;
}

/** Newest first: for admins by creation (any status), for the public by publication (active only). */
export async function listQuests(
  db: Database,
  filters: { teamId?: string; status?: QuestStatus; public: boolean },
  page: PageRequest,
) {
  const conditions: SQL[] = [];
  if (filters.teamId !== undefined) conditions.push(eq(quests.teamId, filters.teamId));
  if (filters.public) conditions.push(eq(quests.status, 'active'));
  else if (filters.status !== undefined) conditions.push(eq(quests.status, filters.status));
  const at = filters.public ? quests.publishedAt : quests.createdAt;
  const rows = await db
    .select()
    .from(quests)
    .where(and(...conditions, afterCursor(at, quests.id, page.after)))
    .orderBy(desc(at), desc(quests.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (row) => ({
    at: (filters.public ? row.publishedAt : row.createdAt) as Date,
    id: row.id,
  }));
}

/** Every active quest: what the consumer matches events against (a handful, not a catalog). */
export function activeQuests(db: Database): Promise<QuestRow[]> {
  return db.select().from(quests).where(eq(quests.status, 'active'));
}

/** Active quests whose end has passed: the job ends them and releases what they promised. */
export async function overdueQuests(db: Database, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: quests.id })
    .from(quests)
    .where(and(eq(quests.status, 'active'), lte(quests.endsAt, sql`now()`)))
    .limit(limit);
  return rows.map((row) => row.id);
}

export interface CountedEvent {
  questId: string;
  userId: string;
  eventId: number;
}

/**
 * Records that each event counted for its quest and fan; answers the ones not recorded before
 * (as `questId|userId|eventId`), which alone may move progress.
 */
export async function markCounted(tx: Database, counted: readonly CountedEvent[]): Promise<Set<string>> {
  if (counted.length === 0) return new Set();
  const rows = rowsOf<{ quest_id: string; user_id: string; event_id: string }>(
    await tx.execute(sql`
      insert into quest_events_counted (quest_id, user_id, event_id)
      select c.quest_id, c.user_id, c.event_id
      from jsonb_to_recordset(${jsonb(counted.map((c) => ({ quest_id: c.questId, user_id: c.userId, event_id: c.eventId })))})
        as c(quest_id text, user_id text, event_id bigint)
      on conflict do nothing
      returning quest_id, user_id, event_id::text`),
  );
  return new Set(rows.map((row) => `${row.quest_id}|${row.user_id}|${row.event_id}`));
}

export interface ProgressKey {
  questId: string;
  userId: string;
  period: string;
}

/** The progress rows of `keys` that exist, locked until the transaction ends, in one order. */
export async function lockProgress(tx: Database, keys: readonly ProgressKey[]): Promise<QuestProgressRow[]> {
  if (keys.length === 0) return [];
  const rows = rowsOf<{
    quest_id: string;
    user_id: string;
    period: string;
    state: unknown;
    progress: number;
    target: number;
    completed_at: string | Date | null;
    claimed_at: string | Date | null;
    grant_id: string | null;
    updated_at: string | Date;
  }>(
    await tx.execute(sql`
      select p.* from quest_progress p
      join unnest(${textArray(keys.map((key) => key.questId))}, ${textArray(keys.map((key) => key.userId))},
                  ${textArray(keys.map((key) => key.period))}) as k(quest_id, user_id, period)
        on p.quest_id = k.quest_id and p.user_id = k.user_id and p.period = k.period
      order by p.quest_id, p.user_id, p.period
      for update of p`),
  );
  const date = (value: string | Date | null) => (value === null ? null : new Date(value));
  return rows.map((row) => ({
    questId: row.quest_id,
    userId: row.user_id,
    period: row.period,
    state: row.state,
    progress: row.progress,
    target: row.target,
    completedAt: date(row.completed_at),
    claimedAt: date(row.claimed_at),
    grantId: row.grant_id,
    updatedAt: new Date(row.updated_at),
  }));
}

/** Writes progress rows (new or changed) in one statement. */
export async function saveProgress(tx: Database, rows: readonly QuestProgressRow[]): Promise<void> {
  if (rows.length === 0) return;
  const written = rows.map((row) => ({
    quest_id: row.questId,
    user_id: row.userId,
    period: row.period,
    state: row.state,
    progress: row.progress,
    target: row.target,
    completed_at: row.completedAt,
    updated_at: row.updatedAt,
  }));
  await tx.execute(sql`
    insert into quest_progress (quest_id, user_id, period, state, progress, target, completed_at, updated_at)
    select r.quest_id, r.user_id, r.period, r.state, r.progress, r.target, r.completed_at, r.updated_at
    from jsonb_to_recordset(${jsonb(written)})
      as r(quest_id text, user_id text, period text, state jsonb, progress integer, target integer, completed_at timestamptz, updated_at timestamptz)
    on conflict (quest_id, user_id, period) do update set
      state = excluded.state, progress = excluded.progress, target = excluded.target,
      completed_at = excluded.completed_at, updated_at = excluded.updated_at`);
}

/** A fan's progress rows of the quests named, for the periods named (the current ones). */
export async function progressOf(db: Database, userId: string, keys: readonly { questId: string; period: string }[]) {
  if (keys.length === 0) return [];
  return db
    .select()
    .from(questProgress)
    .where(
      and(
        eq(questProgress.userId, userId),
        or(...keys.map((key) => and(eq(questProgress.questId, key.questId), eq(questProgress.period, key.period)))),
      ),
    );
}

/** The fan's latest completed period of a quest not yet claimed. */
export async function latestUnclaimed(db: Database, questId: string, userId: string) {
  const [row] = await db
    .select({ period: questProgress.period })
    .from(questProgress)
    .where(
      and(
        eq(questProgress.questId, questId),
        eq(questProgress.userId, userId),
        isNull(questProgress.claimedAt),
        sql`${questProgress.completedAt} is not null`,
      ),
    )
    .orderBy(desc(questProgress.completedAt))
    .limit(1);
  return row?.period;
}

export async function lockOneProgress(tx: Database, key: ProgressKey): Promise<QuestProgressRow | undefined> {
  const [row] = await lockProgress(tx, [key]);
  return row;
}

export async function markClaimed(tx: Database, key: ProgressKey, grantId: string, at: Date): Promise<void> {
  await tx
    .update(questProgress)
    .set({ claimedAt: at, grantId, updatedAt: at })
    .where(
      and(
        eq(questProgress.questId, key.questId),
        eq(questProgress.userId, key.userId),
        eq(questProgress.period, key.period),
      ),
    );
}

/** Counts one claim of an active quest that has not given all it may: answers whether it was counted. */
export async function countCompletion(tx: Database, questId: string): Promise<boolean> {
  const [row] = await tx
    .update(quests)
    .set({ completions: sql`${quests.completions} + 1` })
    .where(
      and(
        eq(quests.id, questId),
        eq(quests.status, 'active'),
        or(isNull(quests.maxCompletions), gt(quests.maxCompletions, quests.completions)),
      ),
    )
    .returning({ id: quests.id });
  return row !== undefined;
}
