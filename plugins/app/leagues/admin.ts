import { randomUUID } from 'node:crypto';
import type { LeagueRow, RoundRow } from '../../../db/schema.js';
import {
  type CreateLeagueBody,
  type CreateRoundBody,
  type League,
  MAX_ROUND_SCORES,
  type Round,
  type RoundScores,
  type RoundScoresBody,
  type UpdateLeagueBody,
  type UpdateRoundBody,
} from '../../../schemas/leagues-api.js';
import type { LeagueRules, PrizeBand } from '../../../schemas/leagues.js';
import type { AuditService } from '../audit/service.js';
import { type AdminAction, authorize, type Principal, requireAdminAccess, teamNotFound } from '../auth/policy.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import type { ErrorDetail } from '../errors.js';
import { canonicalTimeZone } from '../quests/periods.js';
import type { RewardsService } from '../rewards/service.js';
import type { TeamsService } from '../teams/service.js';
import {
  duplicateScores,
  invalidLeague,
  invalidRound,
  leagueArchived,
  leagueNotFound,
  locksAtPassed,
  roundFinal,
  roundImmutable,
  roundNotFound,
  roundNotLocked,
  roundScoresFull,
  roundWindowConflict,
  rulesFrozen,
  unknownTimeZone,
} from './errors.js';
import { toLeague, toRound } from './mappers.js';
import {
  countScores,
  databaseNow,
  findLeague,
  findRound,
  hasLockedRound,
  insertLeague,
  insertRound,
  scoresOf,
  updateLeague,
  updateRound,
  upsertScores,
  windowConflicts,
} from './repository.js';
import { checkPrizes, promiseBands, releaseBands } from './prizes.js';
import { roundStatusAt, validateLeagueRules, validateRoundTimes } from './rules.js';

/** Fields of a round an admin may change while it is open (prizes: while upcoming only). */
const OPEN_FIELDS = new Set(['name', 'locksAt', 'endsAt', 'finalizesAt']);

export interface LeagueAdminDeps {
  db: DatabaseHandle;
  audit: Pick<AuditService, 'record'>;
  teams: Pick<TeamsService, 'exists' | 'withCurrentRole'>;
  rewards: Pick<RewardsService, 'findReward' | 'promise' | 'release'>;
}

/** Leagues and rounds as their team's owners and editors (and platform admins) run them. */
export function createLeagueAdmin({ db, audit, teams, rewards }: LeagueAdminDeps) {
  /** The league, as the caller stands now: 404 when it may not even read it, 403 when it may not `action`. */
  async function authorizedLeague(
    tx: Database,
    principal: Principal,
    id: string,
    action: AdminAction,
    options: { lock?: boolean } = {},
  ): Promise<LeagueRow> {
    requireAdminAccess(principal);
    const league = await findLeague(tx, id, options);
    if (!league) throw leagueNotFound();
    authorize(await teams.withCurrentRole(tx, principal, league.teamId), action, league, leagueNotFound);
    return league;
  }

  /** The rules' problems a schema cannot see, eligible teams that do not exist included. */
  async function checkRules(tx: Database, rules: LeagueRules): Promise<void> {
    const problems = validateLeagueRules(rules);
    const teamIds = rules.eligible.teamIds ?? [];
    for (const [index, teamId] of teamIds.entries()) {
      if (!(await teams.exists(tx, teamId)))
        problems.push({ path: `/rules/eligible/teamIds/${index}`, message: 'no team with this id' });
    }
    if (problems.length > 0) throw invalidLeague(problems);
  }

  const zoneOf = (name: string) => {
    const zone = canonicalTimeZone(name);
    if (!zone) throw unknownTimeZone();
    return zone;
  };

  const record = (
    tx: Database,
    principal: Principal,
    action: string,
    target: { type: 'league' | 'round'; id: string; teamId: string },
    before: unknown,
    after: unknown,
    at: Date,
  ) =>
    audit.record(
      tx,
      {
        actorId: principal.id,
        action,
        targetType: target.type,
        targetId: target.id,
        teamId: target.teamId,
        before,
        after,
      },
      at,
    );

  /** The round of the league, locked FOR UPDATE, with its league as the caller may `action` it. */
  async function authorizedRound(
    tx: Database,
    principal: Principal,
    leagueId: string,
    roundId: string,
    action: AdminAction,
  ) {
    const league = await authorizedLeague(tx, principal, leagueId, action);
    const round = await findRound(tx, roundId, { leagueId, lock: 'update' });
    if (!round) throw roundNotFound();
    return { league, round };
  }

  return {
    authorizedRound,

    async createLeague(principal: Principal, body: CreateLeagueBody): Promise<League> {
      requireAdminAccess(principal);
      authorize(principal, 'catalog:write', { teamId: body.teamId }, teamNotFound);
      const timeZone = zoneOf(body.timeZone ?? 'UTC');
      return db.transaction(async (tx) => {
        if (!(await teams.exists(tx, body.teamId))) throw teamNotFound();
        authorize(await teams.withCurrentRole(tx, principal, body.teamId), 'catalog:write', body, teamNotFound);
        await checkRules(tx, body.rules);
        const now = new Date();
        const created = await insertLeague(tx, {
          id: randomUUID(),
          teamId: body.teamId,
          name: body.name,
          description: body.description ?? '',
          rules: body.rules,
          timeZone,
          season: body.season,
          createdBy: principal.id,
          createdAt: now,
          updatedAt: now,
        });
        const league = toLeague(created);
        await record(
          tx,
          principal,
          'league.create',
          { type: 'league', id: created.id, teamId: created.teamId },
          null,
          league,
          now,
        );
        return league;
      });
    },

    /** Name, description, season, status and zone at any time; rules while no round has locked. */
    async updateLeague(principal: Principal, id: string, body: UpdateLeagueBody): Promise<League> {
      const timeZone = body.timeZone === undefined ? undefined : zoneOf(body.timeZone);
      return db.transaction(async (tx) => {
        const league = await authorizedLeague(tx, principal, id, 'catalog:write', { lock: true });
        if (body.rules !== undefined) {
          if (await hasLockedRound(tx, id)) throw rulesFrozen();
          await checkRules(tx, body.rules);
        }
        const now = new Date();
        const changed = await updateLeague(tx, id, {
          ...body,
          ...(timeZone === undefined ? {} : { timeZone }),
          updatedAt: now,
        });
        const after = toLeague(changed);
        await record(
          tx,
          principal,
          'league.update',
          { type: 'league', id, teamId: league.teamId },
          toLeague(league),
          after,
          now,
        );
        return after;
      });
    },

    /**
     * A round of an active league, in its current season. Its prize bands' rewards must be the
     * league's team's (or the platform's, for a platform admin); a band whose reward holds packs
     * or collectibles promises them for `toRank - fromRank + 1` winners now, or the round is
     * refused (409 from the grant engine).
     */
    async createRound(principal: Principal, leagueId: string, body: CreateRoundBody): Promise<Round> {
      const times = {
        opensAt: new Date(body.opensAt),
        locksAt: new Date(body.locksAt),
        endsAt: new Date(body.endsAt),
        finalizesAt: body.finalizesAt ? new Date(body.finalizesAt) : null,
      };
      const prizes = body.prizes ?? [];
      const problems = validateRoundTimes(times);
      if (problems.length > 0) throw invalidRound(problems);
      return db.transaction(async (tx) => {
        const league = await authorizedLeague(tx, principal, leagueId, 'catalog:write', { lock: true });
        if (league.status !== 'active') throw leagueArchived();
        const now = await databaseNow(tx);
        if (times.locksAt <= now) throw invalidRound([{ path: '/locksAt', message: 'must be in the future' }]);
        const id = randomUUID();
        const stocked = await checkPrizes(tx, rewards, prizes, { teamId: league.teamId, principal });
        const created = await insertRound(tx, {
          id,
          leagueId,
          name: body.name,
          season: league.season,
          ...times,
          prizes,
          status: roundStatusAt({ ...times, finalizedAt: null }, now) as RoundRow['status'],
          createdBy: principal.id,
          createdAt: now,
          updatedAt: now,
        });
        // Every winner a band can have (ties at its last rank aside) is reserved now, or the round is refused.
        await promiseBands(tx, rewards, created, prizes, stocked);
        const round = toRound(created, now);
        await record(tx, principal, 'round.create', { type: 'round', id, teamId: league.teamId }, null, round, now);
        return round;
      });
    },

    /**
     * Upcoming: any field, prizes included (their stock re-promised). Open: name, locksAt (not
     * before now), endsAt, finalizesAt. Locked or final: nothing. A new play window may not overlap another round holding one of this
     * round's copies.
     */
    async updateRound(principal: Principal, leagueId: string, roundId: string, body: UpdateRoundBody): Promise<Round> {
      return db.transaction(async (tx) => {
        const { league, round } = await authorizedRound(tx, principal, leagueId, roundId, 'catalog:write');
        const now = await databaseNow(tx);
        const status = roundStatusAt(round, now);
        const fields = Object.keys(body);
        if (status === 'locked' || status === 'final') throw roundImmutable(status, fields);
        if (status === 'open' && fields.some((field) => !OPEN_FIELDS.has(field)))
          throw roundImmutable(
            status,
            fields.filter((field) => !OPEN_FIELDS.has(field)),
          );
        const next = {
          opensAt: body.opensAt ? new Date(body.opensAt) : round.opensAt,
          locksAt: body.locksAt ? new Date(body.locksAt) : round.locksAt,
          endsAt: body.endsAt ? new Date(body.endsAt) : round.endsAt,
          finalizesAt:
            body.finalizesAt === undefined
              ? round.finalizesAt
              : body.finalizesAt === null
                ? null
                : new Date(body.finalizesAt),
        };
        const problems: ErrorDetail[] = validateRoundTimes(next);
        if (problems.length > 0) throw invalidRound(problems);
        if (body.locksAt !== undefined && next.locksAt < now) throw locksAtPassed();
        const windowMoved =
          next.locksAt.getTime() !== round.locksAt.getTime() || next.endsAt.getTime() !== round.endsAt.getTime();
        if (windowMoved) {
          const conflicts = await windowConflicts(tx, { roundId, locksAt: next.locksAt, endsAt: next.endsAt });
          if (conflicts.length > 0)
            throw roundWindowConflict(
              conflicts.map((conflict) => ({
                path: '/endsAt',
                message: `copy ${conflict.pullId} plays in round ${conflict.roundId}`,
              })),
            );
        }
        // New bands (an upcoming round only): the old ones' stock goes back, the new ones' is promised or 409.
        let prizes: { prizes: PrizeBand[]; prizesVersion: number } | undefined;
        if (body.prizes !== undefined) {
          const stocked = await checkPrizes(tx, rewards, body.prizes, { teamId: league.teamId, principal });
          await releaseBands(tx, rewards, round);
          prizes = { prizes: body.prizes, prizesVersion: round.prizesVersion + 1 };
          await promiseBands(tx, rewards, { id: roundId, prizesVersion: prizes.prizesVersion }, body.prizes, stocked);
        }
        const changed = await updateRound(tx, roundId, {
          ...(body.name === undefined ? {} : { name: body.name }),
          ...prizes,
          ...next,
          status: roundStatusAt({ ...next, finalizedAt: null }, now) as RoundRow['status'],
          updatedAt: now,
        });
        const after = toRound(changed, now);
        await record(
          tx,
          principal,
          'round.update',
          { type: 'round', id: roundId, teamId: league.teamId },
          toRound(round, now),
          after,
          now,
        );
        return after;
      });
    },

    /** Every score posted for the round, by collectibleId (the team's viewers may read them). */
    async scores(principal: Principal, leagueId: string, roundId: string): Promise<RoundScores> {
      return db.transaction(async (tx) => {
        await authorizedLeague(tx, principal, leagueId, 'catalog:read');
        if (!(await findRound(tx, roundId, { leagueId }))) throw roundNotFound();
        return { roundId, scores: await scoresOf(tx, roundId) };
      });
    },

    /**
     * Sets collectibles' points in a locked round (not final). A value that changes a score
     * already posted is a correction, audited with the scores before and after. Answers every
     * score of the round.
     */
    async postScores(
      principal: Principal,
      leagueId: string,
      roundId: string,
      body: RoundScoresBody,
    ): Promise<RoundScores> {
      const seen = new Map<string, number>();
      const repeats: ErrorDetail[] = [];
      body.forEach((item, index) => {
        const first = seen.get(item.collectibleId);
        if (first === undefined) seen.set(item.collectibleId, index);
        else repeats.push({ path: `/${index}/collectibleId`, message: `also at /${first}` });
      });
      if (repeats.length > 0) throw duplicateScores(repeats);
      return db.transaction(async (tx) => {
        const { league, round } = await authorizedRound(tx, principal, leagueId, roundId, 'catalog:write');
        const now = await databaseNow(tx);
        if (round.finalizedAt) throw roundFinal();
        if (now < round.locksAt) throw roundNotLocked();
        const before = new Map(
          (await scoresOf(tx, roundId, [...seen.keys()])).map((row) => [row.collectibleId, row.score]),
        );
        const corrected = body.filter(
          (item) => before.has(item.collectibleId) && before.get(item.collectibleId) !== item.score,
        );
        await upsertScores(tx, roundId, body, now);
        if ((await countScores(tx, roundId)) > MAX_ROUND_SCORES) throw roundScoresFull(MAX_ROUND_SCORES);
        if (corrected.length > 0) {
          await record(
            tx,
            principal,
            'round.scores.correct',
            { type: 'round', id: roundId, teamId: league.teamId },
            {
              scores: corrected.map((item) => ({
                collectibleId: item.collectibleId,
                score: before.get(item.collectibleId),
              })),
            },
            { scores: corrected },
            now,
          );
        }
        return { roundId, scores: await scoresOf(tx, roundId) };
      });
    },
  };
}

export type LeagueAdmin = ReturnType<typeof createLeagueAdmin>;
