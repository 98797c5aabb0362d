import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../schemas/common.js';
import {
  LeagueListQuery,
  LeaguePage,
  LeagueParams,
  LeagueResponse,
  LineupBody,
  LineupResponse,
  RoundListQuery,
  RoundPage,
  RoundParams,
  RoundResponse,
} from '../../../schemas/leagues-api.js';

const leagueRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Leagues'],
        summary: 'Leagues',
        description: 'Every league, active or archived, newest first; filter by `teamId`; paginated.',
        operationId: 'listLeagues',
        querystring: LeagueListQuery,
        response: { 200: LeaguePage, ...errorResponses(400) },
      },
    },
    async (request) => {
      const page = await app.leagues.list(request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/:id',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Leagues'],
        summary: 'A league',
        description: 'A league with its rules and its current `season` (the season new rounds take).',
        operationId: 'getLeague',
        params: LeagueParams,
        response: { 200: LeagueResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({ success: true as const, data: await app.leagues.get(request.params.id) }),
  );

  app.get(
    '/:id/rounds',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Leagues'],
        summary: 'A league’s rounds',
        description:
          'Latest opening first; paginated. Each round’s `status` is computed from its times when answered (`upcoming`, `open`, `locked`, `final`).',
        operationId: 'listLeagueRounds',
        params: LeagueParams,
        querystring: RoundListQuery,
        response: { 200: RoundPage, ...errorResponses(400, 404) },
      },
    },
    async (request) => {
      const page = await app.leagues.rounds(request.params.id, request.query);
      return { success: true as const, data: page.items, nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/:id/rounds/:roundId',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Leagues'],
        summary: 'A round',
        description:
          'A round of the league with its prize bands; once final, its `standingsHash` and `entrants` (the standings: GET /api/leaderboards/rounds/{roundId}).',
        operationId: 'getLeagueRound',
        params: RoundParams,
        response: { 200: RoundResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leagues.round(request.params.id, request.params.roundId),
    }),
  );

  app.get(
    '/:id/rounds/:roundId/lineup',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Leagues'],
        summary: 'My lineup in a round',
        description: 'The copies the caller fielded in the round; 404 `lineup_not_found` when they fielded none.',
        operationId: 'getLineup',
        params: RoundParams,
        response: { 200: LineupResponse, ...errorResponses(404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leagues.lineup(callerOf(request).id, request.params.id, request.params.roundId),
    }),
  );

  app.put(
    '/:id/rounds/:roundId/lineup',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Leagues'],
        summary: 'Save my lineup in a round',
        description:
          'Replaces the caller’s lineup with exactly the league’s `lineupSize` copies they own, each once. Accepted from `opensAt` until `locksAt` by the database’s clock (409 `round_not_open` before, `round_locked` from then on; 409 `league_archived`). Copies not owned (or unknown): 404 `pull_not_found`, one detail per position; copies the rules refuse (size, team, rarity, caps, repeats): 400 `lineup_invalid`; a copy in a lineup of another round whose play window [locksAt, endsAt) overlaps this one: 409 `copy_in_overlapping_round`. `submittedAt` (the tie-breaker "earliest submission") moves only when the copies change: a save of the same copies, in any order, keeps it.',
        operationId: 'saveLineup',
        params: RoundParams,
        body: Type.Ref(LineupBody),
        response: { 200: LineupResponse, ...errorResponses(400, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leagues.saveLineup(callerOf(request).id, request.params.id, request.params.roundId, request.body),
    }),
  );
};

export default leagueRoutes;
