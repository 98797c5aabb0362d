import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import {
  CreateLeagueBody,
  CreateRoundBody,
  LeagueParams,
  LeagueResponse,
  RoundParams,
  RoundResponse,
  RoundScoresBody,
  RoundScoresResponse,
  UpdateLeagueBody,
  UpdateRoundBody,
} from '../../../../schemas/leagues-api.js';

/** Leagues as platform admins and their team's owners and editors run them (viewers: 403). */
const adminLeagueRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Leagues'],
        summary: 'Create a league',
        description:
          'A league of a team, with its rules and current season. `timeZone` is an IANA zone (default UTC). Rules are checked beyond their schema (multipliers with two decimals at most, caps within `lineupSize`, eligible teams that exist): 400.',
        operationId: 'createLeague',
        body: Type.Ref(CreateLeagueBody),
        response: { 201: LeagueResponse, ...errorResponses(400, 403, 404) },
      },
    },
    async (request, reply) => {
      const league = await app.leagues.admin.createLeague(callerOf(request), request.body);
      return reply.code(201).send({ success: true as const, data: league });
    },
  );

  app.patch(
    '/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Leagues'],
        summary: 'Edit a league',
        description:
          'Name, description, season (rounds created later take it), status (`archived`: no new rounds or lineups) and time zone at any time; `rules` only while no round of the league is locked or final (409 `league_rules_frozen`).',
        operationId: 'updateLeague',
        params: LeagueParams,
        body: Type.Ref(UpdateLeagueBody),
        response: { 200: LeagueResponse, ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leagues.admin.updateLeague(callerOf(request), request.params.id, request.body),
    }),
  );

  app.post(
    '/:id/rounds',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Leagues'],
        summary: 'Create a round',
        description:
          'A round of an active league (409 `league_archived`), in the league’s current season. Times: opensAt < locksAt < endsAt <= finalizesAt, locksAt in the future (400). Prize bands must not overlap (400) and name rewards of the league’s team, or of the platform for a platform admin (404 `reward_not_found`). A band whose reward holds packs or collectibles reserves them for `toRank - fromRank + 1` winners now, or the round is refused (409 `reward_stock_insufficient`).',
        operationId: 'createRound',
        params: LeagueParams,
        body: Type.Ref(CreateRoundBody),
        response: { 201: RoundResponse, ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const round = await app.leagues.admin.createRound(callerOf(request), request.params.id, request.body);
      return reply.code(201).send({ success: true as const, data: round });
    },
  );

  app.patch(
    '/:id/rounds/:roundId',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Leagues'],
        summary: 'Edit a round',
        description:
          'Upcoming: any field; new `prizes` release the stock the old bands held and promise theirs (409 `reward_stock_insufficient`, and nothing changes, when it cannot). Open: `name`, `locksAt` (not before now), `endsAt`, `finalizesAt`. Locked or final: nothing (409 `round_immutable`). A play window that would overlap another round holding one of this round’s copies: 409 `round_window_conflict`.',
        operationId: 'updateRound',
        params: RoundParams,
        body: Type.Ref(UpdateRoundBody),
        response: { 200: RoundResponse, ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leagues.admin.updateRound(
        callerOf(request),
        request.params.id,
        request.params.roundId,
        request.body,
      ),
    }),
  );

  app.get(
    '/:id/rounds/:roundId/scores',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Leagues'],
        summary: 'A round’s scores',
        description:
          'Every collectible’s points posted for the round, by collectibleId. The team’s viewers may read them.',
        operationId: 'getRoundScores',
        params: RoundParams,
        response: { 200: RoundScoresResponse, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leagues.admin.scores(callerOf(request), request.params.id, request.params.roundId),
    }),
  );

  app.post(
    '/:id/rounds/:roundId/scores',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Leagues'],
        summary: 'Post collectibles’ round scores',
        description:
          'Sets each collectible’s points in the round (integers, ±100 000), 1 to 500 per request, each collectible once (400). Only while the round is locked: 409 `round_not_locked` before locksAt, `round_final` once finalized. A value that changes a posted score is a correction, recorded in the audit log with the scores before and after. Answers every score of the round.',
        operationId: 'postRoundScores',
        params: RoundParams,
        body: RoundScoresBody,
        response: { 200: RoundScoresResponse, ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leagues.admin.postScores(
        callerOf(request),
        request.params.id,
        request.params.roundId,
        request.body,
      ),
    }),
  );

  app.post(
    '/:id/rounds/:roundId/finalize',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Admin', 'Leagues'],
        summary: 'Finalize a round',
        description:
          'Freezes the standings of a locked round (409 `round_not_locked` before locksAt) with their hash, then pays every prize once. Safe to repeat, also concurrently: a call on a final round pays what is missing and answers the round (200) whether or not this call did the work. A prize that cannot be granted (a winner tied past a band’s size is paid from supply, which may have run out) answers that error (e.g. 409 `reward_stock_insufficient`); the round stays final with `prizesPaidAt` null, and finalizing again after restocking pays the rest.',
        operationId: 'finalizeRound',
        params: RoundParams,
        response: { 200: RoundResponse, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => {
      const principal = callerOf(request);
      const { id, roundId } = request.params;
      await app.db.transaction((tx) => app.leagues.admin.authorizedRound(tx, principal, id, roundId, 'catalog:write'));
      return { success: true as const, data: await app.leagues.finalizer.finalize(roundId, principal.id) };
    },
  );
};

export default adminLeagueRoutes;
