import t from 'tap';
import { buildTestApp, tokenFor } from '../../../support/app.js';
import { ADMIN, expectStatus } from '../../../support/catalog.js';
import {
  adminRoundUrl,
  copiesOf,
  createLeagueRequest,
  createRoundRequest,
  finalizeRequest,
  giveCards,
  inSeconds,
  leagueWorld,
  openRound,
  postScores,
  putLineup,
  waitUntil,
} from '../../../support/leagues.js';
import { createReward } from '../../../support/rewards.js';
import { call, codeOf, detailPaths, signIn, staffedTeam } from '../../../support/teams.js';

/** Who may run a league (platform admins, the team's owners and editors), and bad input answered in 4xx. */

const times = () => ({ opensAt: inSeconds(-60), locksAt: inSeconds(60), endsAt: inSeconds(120) });

t.test(
  'platform admins and the team’s owners and editors run its leagues; viewers 403, other teams 404, anonymous 401',
  async (t) => {
    const app = await buildTestApp(t);
    const world = await leagueWorld(app, 'perm');
    const other = await staffedTeam(app, 'other');
    const fan = await signIn(app, 'perm-fan');
    const { staff, leagueId } = world;

    const anonymous = await call(app, 'POST', '/api/admin/leagues', null, { payload: {} });
    t.equal(anonymous.statusCode, 401);
    t.equal(
      (await createLeagueRequest(app, { teamId: staff.team.id, rules: { lineupSize: 1, eligible: {} } }, fan))
        .statusCode,
      403,
      'a fan',
    );
    const byViewer = await createLeagueRequest(
      app,
      { teamId: staff.team.id, rules: { lineupSize: 1, eligible: {} } },
      staff.viewer,
    );
    t.equal(byViewer.statusCode, 403, 'a viewer');
    const byOther = await createLeagueRequest(
      app,
      { teamId: staff.team.id, rules: { lineupSize: 1, eligible: {} } },
      other.owner,
    );
    t.equal(byOther.statusCode, 404, 'another team’s owner');
    t.equal(codeOf(byOther), 'team_not_found');
    const byOwner = await createLeagueRequest(
      app,
      { teamId: staff.team.id, rules: { lineupSize: 2, eligible: {} } },
      staff.owner,
    );
    expectStatus(byOwner, 201, 'the owner');
    t.equal(byOwner.json().data.timeZone, 'UTC');
    t.equal(byOwner.json().data.status, 'active');

    const patch = (token: string | null, body: Record<string, unknown>) =>
      call(app, 'PATCH', `/api/admin/leagues/${leagueId}`, token, { payload: body });
    t.equal((await patch(staff.viewer, { name: 'x' })).statusCode, 403);
    const hidden = await patch(other.editor, { name: 'x' });
    t.equal(hidden.statusCode, 404);
    t.equal(codeOf(hidden), 'league_not_found');
    expectStatus(await patch(staff.editor, { name: 'Renamed', timeZone: 'europe/paris' }), 200, 'the editor');

    t.equal((await createRoundRequest(app, leagueId, times(), staff.viewer)).statusCode, 403);
    t.equal((await createRoundRequest(app, leagueId, times(), other.owner)).statusCode, 404);
    const round = await createRoundRequest(app, leagueId, times(), staff.editor);
    expectStatus(round, 201, 'the editor creates a round');
    const roundId = round.json().data.id;
    t.equal(round.json().data.season, '2026-27');
    t.equal(round.json().data.status, 'open');
    t.equal(
      (await postScores(app, leagueId, roundId, [{ collectibleId: 'c', score: 1 }], staff.viewer)).statusCode,
      403,
    );
    t.equal((await finalizeRequest(app, leagueId, roundId, staff.viewer)).statusCode, 403);
    t.equal((await finalizeRequest(app, leagueId, roundId, other.owner)).statusCode, 404);
    t.equal((await finalizeRequest(app, leagueId, roundId, fan)).statusCode, 403);

    const list = await call(app, 'GET', '/api/leagues', null, { query: { teamId: staff.team.id, limit: '1' } });
    expectStatus(list, 200, 'list');
    t.equal(list.json().data.length, 1);
    t.ok(list.json().nextCursor, 'two leagues: a second page');
    const second = await call(app, 'GET', '/api/leagues', null, {
      query: { teamId: staff.team.id, limit: '1', cursor: list.json().nextCursor },
    });
    t.equal(second.json().data.length, 1);
    t.equal(second.json().nextCursor, null);
    const league = await call(app, 'GET', `/api/leagues/${leagueId}`, null);
    t.equal(league.json().data.name, 'Renamed');
    t.equal(league.json().data.timeZone, 'Europe/Paris', 'the zone in its canonical spelling');
    const rounds = await call(app, 'GET', `/api/leagues/${leagueId}/rounds`, null);
    t.same(
      rounds.json().data.map((r: { id: string }) => r.id),
      [roundId],
    );
  },
);

t.test('bad input is a 4xx, never a 500', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'bad');
  const { leagueId, staff } = world;
  const foreign = await staffedTeam(app, 'bad-other');
  const foreignReward = await createReward(app, { teamId: foreign.team.id, coins: 5 });

  const cases: [string, Promise<{ statusCode: number }>, number, string?][] = [
    ['unknown league', call(app, 'GET', '/api/leagues/no-such-league', null), 404, 'league_not_found'],
    ['unknown league rounds', call(app, 'GET', '/api/leagues/no-such-league/rounds', null), 404, 'league_not_found'],
    ['unknown round', call(app, 'GET', `/api/leagues/${leagueId}/rounds/nope`, null), 404, 'round_not_found'],
    ['an id too long', call(app, 'GET', `/api/leagues/${'x'.repeat(200)}`, null), 400],
    ['a bad cursor', call(app, 'GET', '/api/leagues', null, { query: { cursor: 'garbage' } }), 400, 'invalid_cursor'],
    ['unknown league patch', call(app, 'PATCH', '/api/admin/leagues/nope', ADMIN, { payload: { name: 'x' } }), 404],
    ['an empty patch', call(app, 'PATCH', `/api/admin/leagues/${leagueId}`, ADMIN, { payload: {} }), 400],
    [
      'an unknown time zone',
      createLeagueRequest(app, {
        teamId: staff.team.id,
        rules: { lineupSize: 1, eligible: {} },
        timeZone: 'Mars/Olympus',
      }),
      400,
    ],
    [
      'a multiplier with three decimals',
      createLeagueRequest(app, {
        teamId: staff.team.id,
        rules: { lineupSize: 1, eligible: {}, multipliers: { rare: 1.005 } },
      }),
      400,
    ],
    [
      'a cap above the lineup',
      createLeagueRequest(app, {
        teamId: staff.team.id,
        rules: { lineupSize: 1, eligible: {}, rarityCaps: { rare: 2 } },
      }),
      400,
    ],
    [
      'an unknown eligible team',
      createLeagueRequest(app, { teamId: staff.team.id, rules: { lineupSize: 1, eligible: { teamIds: ['nope'] } } }),
      400,
    ],
    [
      'a bad season',
      createLeagueRequest(app, { teamId: staff.team.id, rules: { lineupSize: 1, eligible: {} }, season: '' }),
      400,
    ],
    [
      'an unknown team',
      createLeagueRequest(app, { teamId: 'nope', rules: { lineupSize: 1, eligible: {} } }),
      404,
      'team_not_found',
    ],
    [
      'locksAt before opensAt',
      createRoundRequest(app, leagueId, { opensAt: inSeconds(60), locksAt: inSeconds(30), endsAt: inSeconds(90) }),
      400,
    ],
    [
      'locksAt in the past',
      createRoundRequest(app, leagueId, { opensAt: inSeconds(-60), locksAt: inSeconds(-30), endsAt: inSeconds(90) }),
      400,
    ],
    ['finalizesAt before endsAt', createRoundRequest(app, leagueId, { ...times(), finalizesAt: inSeconds(100) }), 400],
    ['not a date', createRoundRequest(app, leagueId, { ...times(), endsAt: 'tomorrow' }), 400],
    [
      'overlapping bands',
      createRoundRequest(app, leagueId, {
        ...times(),
        prizes: [
          { fromRank: 1, toRank: 3, rewardId: foreignReward.id },
          { fromRank: 2, toRank: 4, rewardId: foreignReward.id },
        ],
      }),
      400,
    ],
    [
      'another team’s reward',
      createRoundRequest(app, leagueId, {
        ...times(),
        prizes: [{ fromRank: 1, toRank: 1, rewardId: foreignReward.id }],
      }),
      404,
      'reward_not_found',
    ],
    ['a round of an unknown league', createRoundRequest(app, 'nope', times()), 404, 'league_not_found'],
    [
      'scores of an unknown round',
      postScores(app, leagueId, 'nope', [{ collectibleId: 'c', score: 1 }]),
      404,
      'round_not_found',
    ],
    ['no scores', postScores(app, leagueId, 'nope', []), 400],
    ['a score out of range', postScores(app, leagueId, 'nope', [{ collectibleId: 'c', score: 100_001 }]), 400],
    ['finalize an unknown round', finalizeRequest(app, leagueId, 'nope'), 404, 'round_not_found'],
    [
      'a lineup too long',
      putLineup(
        app,
        tokenFor('root'),
        leagueId,
        'nope',
        Array.from({ length: 12 }, (_, i) => `p${i}`),
      ),
      400,
    ],
    ['the board of an unknown round', call(app, 'GET', '/api/leaderboards/rounds/nope', null), 404, 'round_not_found'],
    [
      'a board limit too high',
      call(app, 'GET', '/api/leaderboards/rounds/nope', null, { query: { limit: '501' } }),
      400,
    ],
  ];
  for (const [label, pending, status, code] of cases) {
    const res = (await pending) as Parameters<typeof codeOf>[0];
    t.equal(res.statusCode, status, label);
    if (code) t.equal(codeOf(res), code, `${label}: ${code}`);
  }
});

t.test(
  'rules freeze once a round locks; open rounds change only some fields; archived leagues take no rounds',
  async (t) => {
    const app = await buildTestApp(t);
    const world = await leagueWorld(app, 'life', { lineupSize: 1, eligible: {} });
    await giveCards(app, world, ['life-fan']);
    const { leagueId } = world;
    const round = await openRound(app, leagueId, 1.2);
    const patchRound = (body: Record<string, unknown>) =>
      call(app, 'PATCH', adminRoundUrl(leagueId, round.id), ADMIN, { payload: body });
    const opensAt = await patchRound({ opensAt: inSeconds(-10) });
    t.equal(codeOf(opensAt), 'round_immutable', 'opensAt of an open round');
    t.same(detailPaths(opensAt), ['/opensAt']);
    const past = await patchRound({ locksAt: inSeconds(-1) });
    t.equal(past.statusCode, 400, 'locksAt not before now');
    expectStatus(await patchRound({ name: 'Matchday 1' }), 200, 'a new name');
    expectStatus(
      await call(app, 'PATCH', `/api/admin/leagues/${leagueId}`, ADMIN, {
        payload: { rules: { lineupSize: 1, eligible: { minRarity: 'rare' } } },
      }),
      200,
      'rules while no round has locked',
    );
    const [copy] = (await copiesOf(app, 'life-fan')).filter((c) => c.rarity === 'epic');
    expectStatus(
      await putLineup(app, tokenFor('life-fan'), leagueId, round.id, [copy?.pullId as string]),
      200,
      'lineup',
    );
    await waitUntil(round.locksAt);
    const frozen = await call(app, 'PATCH', `/api/admin/leagues/${leagueId}`, ADMIN, {
      payload: { rules: { lineupSize: 2, eligible: {} } },
    });
    t.equal(frozen.statusCode, 409);
    t.equal(codeOf(frozen), 'league_rules_frozen');
    t.equal(codeOf(await patchRound({ name: 'late' })), 'round_immutable', 'a locked round');
    expectStatus(
      await call(app, 'PATCH', `/api/admin/leagues/${leagueId}`, ADMIN, {
        payload: { status: 'archived', season: '2027-28' },
      }),
      200,
      'archive',
    );
    const refused = await createRoundRequest(app, leagueId, times());
    t.equal(codeOf(refused), 'league_archived');
    const stillReadable = await call(app, 'GET', `/api/leagues/${leagueId}/rounds/${round.id}`, null);
    t.equal(stillReadable.json().data.status, 'locked');
  },
);
