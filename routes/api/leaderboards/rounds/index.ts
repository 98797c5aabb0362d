import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../../../../plugins/app/auth/index.js';
import { errorResponses } from '../../../../schemas/common.js';
import {
  RoundBoardParams,
  RoundBoardQuery,
  RoundMeQuery,
  RoundStandingsMe,
  RoundStandingsPage,
} from '../../../../schemas/leaderboards.js';

const BOARD_INFO =
  'The board is `kind: round`, `id` the round, `window` and `windowKey` `all-time` (a round is its own window), `final: true`, `hash` the round’s standingsHash, `asOf` its finalization, `timeZone` the league’s.';

/** A final round's frozen standings. */
const roundBoardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/:roundId',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['Leaderboard'],
        summary: 'A round’s standings',
        description: `The final standings by position (ties broken: score, best single copy, earliest submission, userId), \`rank\` the competition rank on score ("1224"), points as numbers with two decimals at most; paginated with an opaque cursor. 409 \`round_not_final\` before the round is finalized. ${BOARD_INFO} Recompute the hash from every page: docs/leagues.md.`,
        operationId: 'getRoundBoard',
        params: RoundBoardParams,
        querystring: RoundBoardQuery,
        response: { 200: RoundStandingsPage, ...errorResponses(400, 404, 409) },
      },
    },
    async (request) => {
      const page = await app.leagues.board(request.params.roundId, request.query);
      return {
        success: true as const,
        data: { board: page.board, entries: page.entries },
        nextCursor: page.nextCursor,
      };
    },
  );

  app.get(
    '/:roundId/me',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Leaderboard'],
        summary: 'My place in a round’s standings',
        description: `The caller’s line and up to \`around\` lines above and below by position (fewer at the top and the bottom). A caller without a lineup in the round: \`me\` null and no neighbours. 409 \`round_not_final\` before the round is finalized. ${BOARD_INFO}`,
        operationId: 'getRoundBoardMe',
        params: RoundBoardParams,
        querystring: RoundMeQuery,
        response: { 200: RoundStandingsMe, ...errorResponses(400, 404, 409) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await app.leagues.boardMe(request.params.roundId, callerOf(request).id, request.query),
    }),
  );
};

export default roundBoardRoutes;
