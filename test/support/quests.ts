import { sql } from 'drizzle-orm';
import type { App } from '../../app.js';
import { bearer } from './app.js';
import { ADMIN, expectStatus } from './catalog.js';
import { sqlRows } from './economy.js';

/** Rewards and quests through the admin API, and the quests consumer drained. */

type Json = Record<string, unknown>;

export async function createReward(app: App, body: Json = {}, token = ADMIN): Promise<{ id: string }> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/admin/rewards',
    headers: bearer(token),
    payload: { name: 'Reward', coins: 10, ...body },
  });
  expectStatus(res, 201, 'create reward');
  return res.json().data;
}

export function questRequest(app: App, method: 'GET' | 'POST' | 'PATCH', url: string, body?: Json, token = ADMIN) {
  return app.inject({
    method,
    url,
    headers: bearer(token),
    ...(body === undefined ? {} : { payload: body }),
  });
}

export async function createQuest(app: App, body: Json, token = ADMIN): Promise<{ id: string } & Json> {
  const res = await questRequest(app, 'POST', '/api/admin/quests', { name: 'Quest', ...body }, token);
  expectStatus(res, 201, 'create quest');
  return res.json().data;
}

export async function publishQuest(app: App, id: string, token = ADMIN): Promise<Json> {
  const res = await questRequest(app, 'POST', `/api/admin/quests/${id}`, { action: 'publish' }, token);
  expectStatus(res, 200, 'publish quest');
  return res.json().data;
}

/** A published quest with a coins reward. */
export async function activeQuest(app: App, quest: Json, reward: Json = {}): Promise<{ id: string; rewardId: string }> {
  const { id: rewardId } = await createReward(app, { teamId: quest.teamId, ...reward });
  const { id } = await createQuest(app, { rewardId, startsAt: '2020-01-01T00:00:00.000Z', ...quest });
  await publishQuest(app, id);
  return { id, rewardId };
}

export function claim(app: App, token: string, questId: string, body: Json = {}) {
  return app.inject({ method: 'POST', url: `/api/quests/${questId}/claim`, headers: bearer(token), payload: body });
}

/** The quests consumer: every event readable now, counted. */
export const drainQuests = (app: App) => app.quests.consumer.catchUp();

export interface ProgressRow {
  period: string;
  progress: number;
  target: number;
  completed_at: Date | null;
  grant_id: string | null;
}

export const progressRows = (app: App, questId: string, userId: string) =>
  sqlRows<ProgressRow>(
    app,
    sql`select period, progress, target, completed_at, grant_id from quest_progress where quest_id = ${questId} and user_id = ${userId} order by period`,
  );
