import { randomUUID } from 'node:crypto';
import type { QuestRow } from '../../../db/schema.js';
import type {
  AdminQuestListQuery,
  CreateQuestBody,
  Quest,
  QuestActionBody,
  UpdateQuestBody,
} from '../../../schemas/quests.js';
import type { AuditService } from '../audit/service.js';
import {
  authorize,
  authorizeList,
  forbidden,
  type Principal,
  requireAdminAccess,
  teamNotFound,
} from '../auth/policy.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { pageOf } from '../pagination.js';
import type { RewardsService } from '../rewards/service.js';
import type { TeamsService } from '../teams/service.js';
import { maxCompletionsRequired, questEndsBeforePublication, questNotFound, rewardNotInScope } from './errors.js';
import { toQuest } from './mappers.js';
import { findQuest, insertQuest, listQuests, updateQuest } from './repository.js';
import { canonicalTimeZone } from './periods.js';
import { assertEditable, assertValidQuest, nextStatus } from './rules.js';

/** The key under which a quest's reward inventory is promised, and released when it ends. */
export const promiseKeyOf = (questId: string) => `quest:${questId}`;

/** Whether a reward gives stock (packs, collectibles) that a quest must reserve, or coins only. */
export const holdsStock = (reward: { packs?: readonly unknown[]; collectibles?: readonly unknown[] }) =>
  (reward.packs?.length ?? 0) > 0 || (reward.collectibles?.length ?? 0) > 0;

export interface QuestAdminDeps {
  db: DatabaseHandle;
  audit: Pick<AuditService, 'record'>;
  teams: Pick<TeamsService, 'exists' | 'withCurrentRole'>;
  rewards: Pick<RewardsService, 'findReward' | 'promise' | 'release'>;
}

/**
 * Quests as admins of their scope run them: drafts edited freely, criteria frozen once active, a
 * publication that promises the reward's inventory (or is refused), an end that releases it.
 */
export function createQuestAdmin({ db, audit, teams, rewards }: QuestAdminDeps) {
  /** The quest's reward, which must exist in the quest's scope (a team quest gives its team's rewards). */
  async function rewardFor(tx: Database, rewardId: string, teamId: string | null) {
    const reward = await rewards.findReward(tx, rewardId);
    if (!reward || reward.teamId !== teamId) throw rewardNotInScope();
    return reward;
  }

  /** An active quest's end gives back the stock it reserved and did not give. */
  async function releaseStock(tx: Database, quest: QuestRow): Promise<void> {
    const reward = await rewards.findReward(tx, quest.rewardId);
    if (reward && holdsStock(reward)) await rewards.release(tx, promiseKeyOf(quest.id));
  }

  /** A change of one quest in a transaction holding its row lock, authorized as the caller stands now, audited. */
  async function change(
    principal: Principal,
    id: string,
    action: string,
    work: (tx: Database, quest: QuestRow, now: Date) => Promise<QuestRow>,
  ): Promise<Quest> {
    requireAdminAccess(principal);
    return db.transaction(async (tx) => {
      const quest = await findQuest(tx, id, { lock: true });
      if (!quest) throw questNotFound();
      authorize(await teams.withCurrentRole(tx, principal, quest.teamId), 'catalog:write', quest, questNotFound);
      const now = new Date();
      const changed = await work(tx, quest, now);
      await audit.record(
        tx,
        {
          actorId: principal.id,
          action,
          targetType: 'quest',
          targetId: id,
          teamId: quest.teamId,
          before: toQuest(quest),
          after: toQuest(changed),
        },
        now,
      );
      return toQuest(changed);
    });
  }

  return {
    async list(principal: Principal, query: AdminQuestListQuery) {
      authorizeList(principal, 'catalog:read', query.teamId);
      const page = await listQuests(
        db.orm,
        { teamId: query.teamId, status: query.status, public: false },
        pageOf(query),
      );
      return { items: page.items.map(toQuest), nextCursor: page.nextCursor };
    },

    async get(principal: Principal, id: string): Promise<Quest> {
      requireAdminAccess(principal);
      const quest = await findQuest(db.orm, id);
      if (!quest) throw questNotFound();
      authorize(principal, 'catalog:read', quest, questNotFound);
      return toQuest(quest);
    },

    async create(principal: Principal, body: CreateQuestBody): Promise<Quest> {
      const teamId = body.teamId ?? null;
      requireAdminAccess(principal);
      authorize(principal, 'catalog:write', { teamId }, teamId === null ? forbidden : teamNotFound);
      const now = new Date();
      const input = {
        criteria: body.criteria,
        period: body.period ?? 'once',
        timeZone: canonicalTimeZone(body.timeZone ?? 'UTC') ?? (body.timeZone as string),
        startsAt: body.startsAt ? new Date(body.startsAt) : now,
        endsAt: body.endsAt ? new Date(body.endsAt) : null,
      };
      assertValidQuest({ teamId, ...input }, now);
      return db.transaction(async (tx) => {
        if (teamId !== null && !(await teams.exists(tx, teamId))) throw teamNotFound();
        authorize(await teams.withCurrentRole(tx, principal, teamId), 'catalog:write', { teamId }, teamNotFound);
        await rewardFor(tx, body.rewardId, teamId);
        const created = await insertQuest(tx, {
          id: randomUUID(),
          teamId,
          name: body.name,
          description: body.description ?? '',
          ...input,
          rewardId: body.rewardId,
          maxCompletions: body.maxCompletions ?? null,
          createdBy: principal.id,
          createdAt: now,
          updatedAt: now,
        });
        await audit.record(
          tx,
          {
            actorId: principal.id,
            action: 'quest.create',
            targetType: 'quest',
            targetId: created.id,
            teamId,
            before: null,
            after: toQuest(created),
          },
          now,
        );
        return toQuest(created);
      });
    },

    update(principal: Principal, id: string, body: UpdateQuestBody): Promise<Quest> {
      return change(principal, id, 'quest.update', async (tx, quest, now) => {
        assertEditable(quest.status, Object.keys(body));
        const next = {
          teamId: quest.teamId,
          criteria: body.criteria ?? quest.criteria,
          period: body.period ?? quest.period,
          timeZone: body.timeZone === undefined ? quest.timeZone : (canonicalTimeZone(body.timeZone) ?? body.timeZone),
          startsAt: body.startsAt ? new Date(body.startsAt) : quest.startsAt,
          endsAt: body.endsAt === undefined ? quest.endsAt : body.endsAt === null ? null : new Date(body.endsAt),
        };
        assertValidQuest(next, now);
        if (body.rewardId !== undefined) await rewardFor(tx, body.rewardId, quest.teamId);
        const { criteria, ...fields } = body;
        return (await updateQuest(tx, id, {
          ...fields,
          ...(criteria ? { criteria } : {}),
          timeZone: next.timeZone,
          startsAt: next.startsAt,
          endsAt: next.endsAt,
          updatedAt: now,
        })) as QuestRow;
      });
    },

    act(principal: Principal, id: string, body: QuestActionBody): Promise<Quest> {
      return change(principal, id, `quest.${body.action}`, async (tx, quest, now) => {
        const status = nextStatus(quest.status, body.action);
        if (body.action === 'publish') {
          const reward = await rewardFor(tx, quest.rewardId, quest.teamId);
          if (holdsStock(reward)) {
            if (quest.maxCompletions === null) throw maxCompletionsRequired();
            // Every completion it may give is reserved now, or the publication is refused.
            await rewards.promise(tx, { key: promiseKeyOf(id), rewardId: quest.rewardId, count: quest.maxCompletions });
          }
          // Nothing done before the quest went live counts: a start in the past becomes the publication.
          const startsAt = quest.startsAt < now ? now : quest.startsAt;
          if (quest.endsAt && quest.endsAt <= startsAt) throw questEndsBeforePublication();
          return (await updateQuest(tx, id, { status, startsAt, publishedAt: now, updatedAt: now })) as QuestRow;
        }
        if (quest.status === 'active') await releaseStock(tx, quest);
        return (await updateQuest(tx, id, { status, endedAt: now, updatedAt: now })) as QuestRow;
      });
    },

    /** Ends one active quest past its end (the job): what it promised and did not give goes back. */
    async endOverdue(id: string): Promise<boolean> {
      return db.transaction(async (tx) => {
        const quest = await findQuest(tx, id, { lock: true });
        if (quest?.status !== 'active' || !quest.endsAt || quest.endsAt > new Date()) return false;
        await releaseStock(tx, quest);
        await updateQuest(tx, id, { status: 'ended', endedAt: new Date(), updatedAt: new Date() });
        return true;
      });
    },
  };
}

export type QuestAdmin = ReturnType<typeof createQuestAdmin>;
