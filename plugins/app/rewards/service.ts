import { randomUUID } from 'node:crypto';
import type { GrantRow, RewardRow } from '../../../db/schema.js';
import type {
  AdminGrantBody,
  CreateRewardBody,
  Grant,
  GrantListQuery,
  GrantOutcome,
  RevokeGrantBody,
  Reward,
  RewardListQuery,
} from '../../../schemas/rewards.js';
import {
  authorize,
  authorizeList,
  forbidden,
  type Principal,
  requireAdminAccess,
  teamNotFound,
} from '../auth/policy.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import type { AuditService } from '../audit/service.js';
import type { EventsService } from '../events/service.js';
import { collectibleNotFound } from '../collectibles/errors.js';
import { packNotFound } from '../packs/errors.js';
import { pageOf } from '../pagination.js';
import type { PurchasesService } from '../purchases/service.js';
import type { TeamsService } from '../teams/service.js';
import type { UsersService } from '../users/service.js';
import type { WalletsService } from '../wallets/service.js';
import { createGrantEngine } from './engine.js';
import { grantNotFound, rewardNotFound, scopeMismatch, usersNotFound } from './errors.js';
import {
  catalogTeams,
  countGrantPulls,
  existingUsers,
  findGrant,
  findReward,
  insertReward,
  listGrants,
  listRewards,
  lockPackStocks,
  movePackCounts,
  revokeGrantedPacks,
  updateGrant,
} from './repository.js';
import { adminSourceKey, bundleOf, coinsToTakeBack, inScope } from './rules.js';
import type { DrawnSerial } from './serials.js';

export function toReward(row: RewardRow): Reward {
  return {
    id: row.id,
    teamId: row.teamId,
    name: row.name,
    coins: row.coins,
    packs: row.packs,
    collectibles: row.collectibles,
    createdAt: row.createdAt.toISOString(),
  };
}

export function toGrant(row: GrantRow): Grant {
  return {
    id: row.id,
    sourceKey: row.sourceKey,
    userId: row.userId,
    rewardId: row.rewardId,
    reward: row.reward,
    status: row.status,
    reason: row.reason,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
    revokeReason: row.revokeReason,
    coinsTakenBack: row.coinsTakenBack,
    coinsUncollected: row.coinsUncollected,
    packsTakenBack: row.packsTakenBack,
    packsKept: row.packsKept,
    collectiblesKept: row.collectiblesKept,
    serials: (row.proof as DrawnSerial[] | null) ?? [],
  };
}

/**
 * Rewards and their grants: the admin side (rewards of a scope, grants to users by key,
 * revocation), the fan's list, and the engine other domains (quests, leagues) grant through.
 */
export function createRewardsService(deps: {
  db: DatabaseHandle;
  wallets: Pick<WalletsService, 'applyChanges' | 'debit' | 'balance'>;
  purchases: Pick<PurchasesService, 'settleReservations'>;
  teams: Pick<TeamsService, 'exists' | 'withCurrentRole'>;
  users: Pick<UsersService, 'ensureExists'>;
  events: Pick<EventsService, 'append'>;
  audit: Pick<AuditService, 'record'>;
}) {
  const { db, wallets, teams, events, audit } = deps;
  const engine = createGrantEngine(deps);

  /** The reward as the caller may see it, for `action` on it: 404 when it may not even read it. */
  async function authorizedReward(
    tx: Database,
    principal: Principal,
    rewardId: string,
    action: 'catalog:read' | 'catalog:write',
  ) {
    requireAdminAccess(principal);
    const reward = await findReward(tx, rewardId);
    if (!reward) throw rewardNotFound();
    authorize(await teams.withCurrentRole(tx, principal, reward.teamId), action, reward, rewardNotFound);
    return reward;
  }

  return {
    ...engine,

    /** The reward, read in the caller's transaction (a quest names one): undefined when unknown. */
    findReward(tx: Database, id: string): Promise<RewardRow | undefined> {
      return findReward(tx, id);
    },

    /**
     * A reward of the platform or a team. Its packs and collectibles must exist and be the
     * caller's to read (404 otherwise); a team's reward holds that team's only (409).
     */
    async create(principal: Principal, body: CreateRewardBody): Promise<Reward> {
      const teamId = body.teamId ?? null;
      requireAdminAccess(principal);
      authorize(principal, 'catalog:write', { teamId }, teamId === null ? forbidden : teamNotFound);
      const bundle = bundleOf(body);
      const row = await db.transaction(async (tx) => {
        if (teamId !== null && !(await teams.exists(tx, teamId))) throw teamNotFound();
        const caller = await teams.withCurrentRole(tx, principal, teamId);
        authorize(caller, 'catalog:write', { teamId }, teamNotFound);
        const found = await catalogTeams(tx, {
          packIds: bundle.packs.map((entry) => entry.packId),
          collectibleIds: bundle.collectibles.map((entry) => entry.collectibleId),
        });
        for (const [index, entry] of bundle.packs.entries()) {
          const owner = found.packs.get(entry.packId);
          if (owner === undefined) throw packNotFound();
          authorize(await teams.withCurrentRole(tx, principal, owner), 'catalog:read', { teamId: owner }, packNotFound);
          if (!inScope(teamId, owner)) throw scopeMismatch(`/packs/${index}/packId`, 'packs');
        }
        for (const [index, entry] of bundle.collectibles.entries()) {
          const owner = found.collectibles.get(entry.collectibleId);
          if (owner === undefined) throw collectibleNotFound();
          authorize(
            await teams.withCurrentRole(tx, principal, owner),
            'catalog:read',
            { teamId: owner },
            collectibleNotFound,
          );
          if (!inScope(teamId, owner)) throw scopeMismatch(`/collectibles/${index}/collectibleId`, 'collectibles');
        }
        const now = new Date();
        const created = await insertReward(tx, {
          id: randomUUID(),
          teamId,
          name: body.name,
          ...bundle,
          createdBy: principal.id,
          createdAt: now,
        });
        await audit.record(
          tx,
          {
            actorId: principal.id,
            action: 'reward.create',
            targetType: 'reward',
            targetId: created.id,
            teamId,
            before: null,
            after: toReward(created),
          },
          now,
        );
        return created;
      });
      return toReward(row);
    },

    async get(principal: Principal, id: string): Promise<Reward> {
      return toReward(await authorizedReward(db.orm, principal, id, 'catalog:read'));
    },

    async list(principal: Principal, query: RewardListQuery) {
      authorizeList(principal, 'catalog:read', query.teamId);
      const page = await listRewards(db.orm, { teamId: query.teamId }, pageOf(query));
      return { items: page.items.map(toReward), nextCursor: page.nextCursor };
    },

    /** The user's grants, newest first. */
    async grants(userId: string, query: GrantListQuery) {
      const page = await listGrants(db.orm, userId, pageOf(query));
      return { items: page.items.map(toGrant), nextCursor: page.nextCursor };
    },

    /**
     * Grants the reward to each user once per `key` (source key `admin:{key}:{userId}`), in one
     * transaction: a repeat answers the grants made before and creates only the missing ones.
     * Unknown users: 404 user_not_found, and nothing is written.
     */
    async adminGrant(principal: Principal, rewardId: string, body: AdminGrantBody): Promise<GrantOutcome[]> {
      return db.transaction(async (tx) => {
        const reward = await authorizedReward(tx, principal, rewardId, 'catalog:write');
        const known = await existingUsers(tx, body.userIds);
        const unknown = body.userIds.flatMap((userId, index) => (known.has(userId) ? [] : [{ index, userId }]));
        if (unknown.length > 0) throw usersNotFound(unknown);
        const granted = await engine.grantBatch(
          tx,
          reward.id,
          body.userIds.map((userId) => ({
            sourceKey: adminSourceKey(body.key, userId),
            userId,
            reason: body.reason,
            actorId: principal.id,
          })),
        );
        const outcomes: GrantOutcome[] = granted.map(({ grant, created }) => ({ created, grant: toGrant(grant) }));
        const made = outcomes.filter((outcome) => outcome.created).map((outcome) => outcome.grant.id);
        // One row per call that gave something: the grants themselves name the key, the reason and the admin.
        if (made.length > 0) {
          await audit.record(
            tx,
            {
              actorId: principal.id,
              action: 'reward.grant',
              targetType: 'reward',
              targetId: reward.id,
              teamId: reward.teamId,
              before: null,
              after: { key: body.key, reason: body.reason, granted: made.length, grantIds: made.slice(0, 100) },
            },
            new Date(),
          );
        }
        return outcomes;
      });
    },

    /**
     * Reverses a grant in place: its coins taken back as far as the wallet holds them (the rest
     * recorded as uncollected), its unopened packs taken back (their supply returns), opened packs
     * and collectibles left and recorded. Revoking a revoked grant answers it unchanged.
     */
    async revoke(principal: Principal, grantId: string, body: RevokeGrantBody): Promise<Grant> {
      requireAdminAccess(principal);
      const row = await db.transaction(async (tx) => {
        const grant = await findGrant(tx, grantId, { lock: true });
        if (!grant) throw grantNotFound();
        const reward = (await findReward(tx, grant.rewardId)) as RewardRow;
        authorize(await teams.withCurrentRole(tx, principal, reward.teamId), 'catalog:write', reward, grantNotFound);
        if (grant.status === 'revoked') return grant;
        const now = new Date();
        const coins = grant.reward.coins;
        const { take, uncollected } = coinsToTakeBack(
          coins,
          coins > 0 ? await wallets.balance(tx, grant.userId, { lock: true }) : 0,
        );
        if (take > 0) {
          await wallets.debit(
            tx,
            {
              userId: grant.userId,
              amount: take,
              kind: 'revocation',
              reference: grant.id,
              reason: body.reason,
              actorId: principal.id,
            },
            now,
          );
        }
        const packs = await revokeGrantedPacks(tx, grant.id, now);
        const taken = [...packs.takenBack].map(([packId, count]) => ({ packId, promised: 0, granted: -count }));
        await lockPackStocks(
          tx,
          taken.map((move) => move.packId),
        );
        await movePackCounts(tx, taken);
        await events.append(tx, {
          type: 'reward.revoked',
          userId: grant.userId,
          teamId: reward.teamId,
          subject: grant.id,
          data: { grantId: grant.id, coinsTakenBack: take, coinsUncollected: uncollected },
        });
        const revoked = await updateGrant(tx, grant.id, {
          status: 'revoked',
          revokedAt: now,
          revokedBy: principal.id,
          revokeReason: body.reason,
          coinsTakenBack: take,
          coinsUncollected: uncollected,
          packsTakenBack: taken.reduce((sum, move) => sum - move.granted, 0),
          packsKept: packs.kept,
          collectiblesKept: await countGrantPulls(tx, grant.id),
        });
        await audit.record(
          tx,
          {
            actorId: principal.id,
            action: 'grant.revoke',
            targetType: 'grant',
            targetId: grant.id,
            teamId: reward.teamId,
            before: toGrant(grant),
            after: toGrant(revoked),
          },
          now,
        );
        return revoked;
      });
      return toGrant(row);
    },

    /** The grant of `grantId` as its admins see it. */
    async getGrant(principal: Principal, grantId: string): Promise<Grant> {
      requireAdminAccess(principal);
      const grant = await findGrant(db.orm, grantId);
      if (!grant) throw grantNotFound();
      const reward = (await findReward(db.orm, grant.rewardId)) as RewardRow;
      authorize(principal, 'catalog:read', reward, grantNotFound);
      return toGrant(grant);
    },
  };
}

export type RewardsService = ReturnType<typeof createRewardsService>;
