import type { QuestRow } from '../../../db/schema.js';
import type { ClaimQuestBody, PublicQuest, QuestClaim, QuestListQuery } from '../../../schemas/quests.js';
import type { DatabaseHandle } from '../database/index.js';
import { pageOf } from '../pagination.js';
import type { RewardsService } from '../rewards/service.js';
import { holdsStock, promiseKeyOf } from './admin.js';
import { questExhausted, questNotActive, questNotCompleted, questNotFound, unknownPeriod } from './errors.js';
import { toProgress, toQuest } from './mappers.js';
import { periodByKey, periodOf } from './periods.js';
import {
  countCompletion,
  findQuest,
  latestUnclaimed,
  listQuests,
  lockOneProgress,
  markClaimed,
  progressOf,
} from './repository.js';

/** The fan's side of quests: what runs now with their progress, and the claim of a reward once per period. */
export function createQuestsService({
  db,
  rewards,
}: {
  db: DatabaseHandle;
  rewards: Pick<RewardsService, 'grant' | 'findReward'>;
}) {
  /** Quests with the caller's progress in each one's current period (null when anonymous). */
  async function withProgress(rows: QuestRow[], userId: string | undefined): Promise<PublicQuest[]> {
    const now = new Date();
    if (!userId) return rows.map((row) => ({ ...toQuest(row), progress: null }));
    const current = rows.map((row) => ({ questId: row.id, period: periodOf(now, row.period, row.timeZone).key }));
    const stored = await progressOf(db.orm, userId, current);
    const byQuest = new Map(stored.map((row) => [`${row.questId}|${row.period}`, row]));
    return rows.map((row, index) => ({
      ...toQuest(row),
      progress: toProgress(row, byQuest.get(`${row.id}|${current[index]?.period}`), now),
    }));
  }

  return {
    async list(query: QuestListQuery, userId?: string) {
      const page = await listQuests(db.orm, { teamId: query.teamId, public: true }, pageOf(query));
      return { items: await withProgress(page.items, userId), nextCursor: page.nextCursor };
    },

    /** An active or ended quest (drafts are not public). */
    async get(id: string, userId?: string): Promise<PublicQuest> {
      const quest = await findQuest(db.orm, id);
      if (!quest || quest.status === 'draft') throw questNotFound();
      const [view] = await withProgress([quest], userId);
      return view as PublicQuest;
    },

    /**
     * Claims the reward of a completed period: the one named, else the latest completed and not
     * yet claimed, else the current one. Once per (quest, period, fan): the progress row's lock
     * makes concurrent claims wait for the first, and the grant's source key makes a second grant
     * impossible whatever happens. Answers the grant and whether this call made it.
     */
    async claim(userId: string, id: string, body: ClaimQuestBody): Promise<QuestClaim> {
      return db.transaction(async (tx) => {
        const quest = await findQuest(tx, id);
        if (!quest || quest.status === 'draft') throw questNotFound();
        if (body.period !== undefined && !periodByKey(body.period, quest.period, quest.timeZone))
          throw unknownPeriod(body.period);
        const period =
          body.period ??
          (await latestUnclaimed(tx, id, userId)) ??
          periodOf(new Date(), quest.period, quest.timeZone).key;
        const key = { questId: id, userId, period };
        const progress = await lockOneProgress(tx, key);
        if (progress?.grantId) {
          return { questId: id, period, grantId: progress.grantId, created: false };
        }
        if (!progress?.completedAt) throw questNotCompleted(period);
        // Counted only while the quest is active and below its limit, as it stands now.
        if (!(await countCompletion(tx, id)))
          throw (await findQuest(tx, id))?.status === 'active' ? questExhausted() : questNotActive();
        const reward = await rewards.findReward(tx, quest.rewardId);
        const { grant } = await rewards.grant(tx, {
          sourceKey: `quest:${id}:${period}:${userId}`,
          userId,
          rewardId: quest.rewardId,
          reason: `quest ${quest.name} (${period})`,
          ...(reward && holdsStock(reward) ? { promiseKey: promiseKeyOf(id) } : {}),
        });
        await markClaimed(tx, key, grant.id, new Date());
        return { questId: id, period, grantId: grant.id, created: true };
      });
    },
  };
}

export type QuestsService = ReturnType<typeof createQuestsService>;
