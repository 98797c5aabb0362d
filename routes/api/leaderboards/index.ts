import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { callerOf } from '../../../plugins/app/auth/index.js';
import type { BoardPage } from '../../../plugins/app/leaderboards/service.js';
import { errorResponses } from '../../../schemas/common.js';
import {
  LeaderboardMe,
  LeaderboardPage,
  LeagueBoardParams,
  WindowedBoardQuery,
  WindowedMeQuery,
} from '../../../schemas/leaderboards.js';

const RANKS =
  'Ranks are competition ranks ("1224"): tied fans share a rank, the next rank counts every fan above. Within a tie the first to reach the score comes first, then the lower user id; never storage order.';
const WINDOWS =
  'A closed window (a past week, a season the league moved on from) is served from its frozen rows once the `freeze-leaderboards` job has ranked them: `board.final` is then true and `board.hash` their SHA-256.';

/** The collector board and each league's season totals: top N with a cursor, and the caller with the fans around them. */
const leaderboardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /**
   * The bytes of each page answered, kept with the page object: the service hands out one object
   * for a board's cached top page, so a crowd reading the top of a board is answered with bytes
   * serialized once (the shape is the route's response schema, checked by the tests).
   */
  const serialized = new WeakMap<BoardPage, Buffer>();
  const sendPage = (reply: FastifyReply, page: BoardPage) => {
    let body = serialized.get(page);
    if (body === undefined) {
      const answer = { success: true, data: { board: page.board, entries: page.entries }, nextCursor: page.nextCursor };
      body = Buffer.from(JSON.stringify(answer));
      serialized.set(page, body);
    }
    return reply.type('application/json; charset=utf-8').send(body);
  };

  app.get(
    '/collectors',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Leaderboard'],
        summary: 'The collector board',
        description: `Fans by the points of every collectible they pulled (packs opened and rewards), best first; \`window\` \`all-time\` (default) or \`week\` (ISO weeks in UTC; \`week\` names one, the current one otherwise). ${RANKS} ${WINDOWS}`,
        operationId: 'getCollectorBoard',
        querystring: WindowedBoardQuery,
        response: { 200: LeaderboardPage, ...errorResponses() },
      },
    },
    async (request, reply) => sendPage(reply, await app.leaderboards.collectors.page(request.query)),
  );

  app.get(
    '/collectors/me',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Leaderboard'],
        summary: 'My place on the collector board',
        description: `The caller’s rank and the \`around\` fans above and below (fewer at the top and the bottom of the board; \`me\` is null while the caller has pulled nothing in the window). ${RANKS}`,
        operationId: 'getMyCollectorRank',
        querystring: WindowedMeQuery,
        response: { 200: LeaderboardMe, ...errorResponses() },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leaderboards.collectors.around(callerOf(request).id, request.query),
    }),
  );

  app.get(
    '/leagues/:leagueId',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Leaderboard'],
        summary: 'A league’s totals',
        description: `Fans by the sum of their scores in the league’s final rounds, best first; \`window\` \`all-time\` (default), \`season\` (the league’s current season unless \`season\` names another) or \`week\` (the rounds locking in an ISO week of the league’s time zone). ${RANKS} ${WINDOWS}`,
        operationId: 'getLeagueBoard',
        params: LeagueBoardParams,
        querystring: WindowedBoardQuery,
        response: { 200: LeaderboardPage, ...errorResponses(404) },
      },
    },
    async (request, reply) =>
      sendPage(reply, await app.leaderboards.league.page(request.params.leagueId, request.query)),
  );

  app.get(
    '/leagues/:leagueId/me',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Leaderboard'],
        summary: 'My place in a league’s totals',
        description: `The caller’s rank in the league’s totals and the \`around\` fans above and below (\`me\` is null until a round the caller played is final). ${RANKS}`,
        operationId: 'getMyLeagueRank',
        params: LeagueBoardParams,
        querystring: WindowedMeQuery,
        response: { 200: LeaderboardMe, ...errorResponses(404) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leaderboards.league.around(request.params.leagueId, callerOf(request).id, request.query),
    }),
  );
};

export default leaderboardRoutes;
