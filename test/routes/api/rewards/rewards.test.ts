import { sql } from 'drizzle-orm';
import t from 'tap';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, createCollectible, FAN, getAdminPack, packInStatus } from '../../../support/catalog.js';
import { assertNoViolations, balance, signIn, sqlRows } from '../../../support/economy.js';
import { adminGrantRequest, createReward, createRewardRequest, revokeRequest } from '../../../support/rewards.js';
import { codeOf, staffedTeam } from '../../../support/teams.js';

/**
 * The rewards API: admins of a scope create rewards of their own catalog and grant them once per
 * key, revoke grants; fans list what they were given. Wrong and hostile inputs are refused
 * before anything is written.
 */

t.test('creating rewards: the bundle and its scope are checked', async (t) => {
  const app = await buildTestApp(t);
  const staff = await staffedTeam(app, 'rw');
  const rival = await staffedTeam(app, 'rival');
  const { pack: teamPack } = await packInStatus(app, 'active', { pack: { teamId: staff.team.id } });
  const { pack: rivalPack } = await packInStatus(app, 'active', { pack: { teamId: rival.team.id } });
  const platformCard = await createCollectible(app, { name: 'Platform' });
  const teamCard = await createCollectible(app, { name: 'Team', teamId: staff.team.id });

  const cases: [string, Record<string, unknown>, number, string][] = [
    ['an empty bundle', {}, 400, 'reward_empty'],
    ['zero coins only', { coins: 0, packs: [] }, 400, 'reward_empty'],
    ['negative coins', { coins: -5 }, 400, 'validation_failed'],
    ['a negative count', { packs: [{ packId: teamPack.id, count: -1 }] }, 400, 'validation_failed'],
    ['a zero count', { collectibles: [{ collectibleId: teamCard.id, count: 0 }] }, 400, 'validation_failed'],
    ['an unknown field', { coins: 1, gems: 5 }, 400, 'validation_failed'],
    ['an unknown pack', { packs: [{ packId: 'no-such-pack', count: 1 }] }, 404, 'pack_not_found'],
    ['an unknown collectible', { collectibles: [{ collectibleId: 'nope', count: 1 }] }, 404, 'collectible_not_found'],
    [
      'a pack named twice',
      {
        packs: [
          { packId: teamPack.id, count: 1 },
          { packId: teamPack.id, count: 2 },
        ],
      },
      400,
      'validation_failed',
    ],
  ];
  for (const [label, body, status, code] of cases) {
    const res = await createRewardRequest(app, { teamId: staff.team.id, ...body }, staff.editor);
    t.equal(res.statusCode, status, `${label}: ${res.body}`);
    t.equal(codeOf(res), code, label);
  }
  const foreign = await createRewardRequest(
    app,
    { teamId: staff.team.id, packs: [{ packId: rivalPack.id, count: 1 }] },
    ADMIN,
  );
  t.equal(codeOf(foreign), 'reward_scope_mismatch', "another team's pack in a team reward");
  const platform = await createRewardRequest(
    app,
    { teamId: staff.team.id, collectibles: [{ collectibleId: platformCard.id, count: 1 }] },
    ADMIN,
  );
  t.equal(codeOf(platform), 'reward_scope_mismatch', "the platform's collectible in a team reward");
  t.equal(
    codeOf(
      await createRewardRequest(
        app,
        { teamId: staff.team.id, packs: [{ packId: rivalPack.id, count: 1 }] },
        staff.editor,
      ),
    ),
    'pack_not_found',
    "a team editor does not learn of another team's pack",
  );
  t.equal(codeOf(await createRewardRequest(app, { teamId: staff.team.id, coins: 5 }, staff.viewer)), 'forbidden');
  t.equal(
    codeOf(await createRewardRequest(app, { coins: 5 }, staff.editor)),
    'forbidden',
    'platform rewards: platform admins',
  );
  t.equal(codeOf(await createRewardRequest(app, { coins: 5 }, FAN)), 'forbidden');

  const mine = await createReward(
    app,
    {
      teamId: staff.team.id,
      coins: 10,
      packs: [{ packId: teamPack.id, count: 1 }],
      collectibles: [{ collectibleId: teamCard.id, count: 1 }],
    },
    staff.editor,
  );
  t.has(mine, { teamId: staff.team.id, coins: 10 });
  const mixed = await createReward(app, {
    packs: [{ packId: rivalPack.id, count: 1 }],
    collectibles: [{ collectibleId: teamCard.id, count: 1 }],
  });
  t.equal(mixed.teamId, null, "a platform reward may hold any team's items");

  const read = (id: string, token: string) =>
    app.inject({ method: 'GET', url: `/api/admin/rewards/${id}`, headers: bearer(token) });
  t.equal((await read(mine.id, staff.viewer)).statusCode, 200, 'a viewer reads its team reward');
  t.equal(codeOf(await read(mine.id, rival.owner)), 'reward_not_found', "another team's reward is hidden");
  t.equal(codeOf(await read(mixed.id, staff.owner)), 'reward_not_found', 'a platform reward is hidden from teams');
  const list = await app.inject({
    method: 'GET',
    url: '/api/admin/rewards',
    query: { teamId: staff.team.id },
    headers: bearer(staff.viewer),
  });
  t.same(
    list.json().data.map((reward: { id: string }) => reward.id),
    [mine.id],
  );
  const all = await app.inject({ method: 'GET', url: '/api/admin/rewards', headers: bearer(ADMIN) });
  t.same(
    all.json().data.map((reward: { id: string }) => reward.id),
    [mixed.id, mine.id],
    'newest first',
  );
  t.equal(
    codeOf(await app.inject({ method: 'GET', url: '/api/admin/rewards', headers: bearer(staff.owner) })),
    'forbidden',
  );
});

t.test('admin grants: once per user and key, all or nothing; fans list theirs; revocation', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', {
    pack: { cardsPerPack: 1, supply: 5 },
    pool: [{ quantity: 10 }],
  });
  const reward = await createReward(app, { coins: 25, packs: [{ packId: pack.id, count: 1 }] });
  const fans = await Promise.all(['g-fan-1', 'g-fan-2', 'g-fan-3'].map((id) => signIn(app, id)));
  const [one, two, three] = fans as [
    { id: string; token: string },
    { id: string; token: string },
    { id: string; token: string },
  ];

  const tooMany = await adminGrantRequest(app, reward.id, {
    userIds: Array.from({ length: 1001 }, (_, i) => `user-${i}`),
    key: 'k',
  });
  t.equal(tooMany.statusCode, 400, '1001 userIds');
  t.equal(codeOf(await adminGrantRequest(app, reward.id, { userIds: [], key: 'k' })), 'validation_failed', 'none');
  t.equal(
    codeOf(await adminGrantRequest(app, reward.id, { userIds: [one.id, one.id], key: 'k' })),
    'validation_failed',
    'a user named twice',
  );
  t.equal(codeOf(await adminGrantRequest(app, reward.id, { userIds: [one.id], key: 'bad key!' })), 'validation_failed');
  t.equal(codeOf(await adminGrantRequest(app, 'no-such-reward', { userIds: [one.id], key: 'k' })), 'reward_not_found');
  t.equal(codeOf(await adminGrantRequest(app, reward.id, { userIds: [one.id], key: 'k' }, FAN)), 'forbidden');

  const unknown = await adminGrantRequest(app, reward.id, { userIds: [one.id, 'never-signed-in'], key: 'k' });
  t.equal(unknown.statusCode, 404);
  t.equal(codeOf(unknown), 'user_not_found');
  t.same(unknown.json().error.details, [{ path: '/userIds/1', message: 'no user never-signed-in' }]);
  const [written] = await sqlRows<{ count: number }>(app, sql`select count(*)::int as count from grants`);
  t.equal(written?.count, 0, 'nothing written');

  const first = await adminGrantRequest(app, reward.id, { userIds: [two.id, one.id], key: 'k' });
  t.equal(first.statusCode, 200, first.body);
  t.same(
    first
      .json()
      .data.map((outcome: { created: boolean; grant: { userId: string; sourceKey: string } }) => [
        outcome.created,
        outcome.grant.userId,
        outcome.grant.sourceKey,
      ]),
    [
      [true, two.id, `admin:k:${two.id}`],
      [true, one.id, `admin:k:${one.id}`],
    ],
    'answered in the order asked',
  );
  const repeat = await adminGrantRequest(app, reward.id, { userIds: [one.id, two.id, three.id], key: 'k' });
  t.same(
    repeat.json().data.map((outcome: { created: boolean }) => outcome.created),
    [false, false, true],
    'a repeat creates only the missing grant',
  );
  t.equal(repeat.json().data[0].grant.id, first.json().data[1].grant.id);
  t.equal(await balance(app, one), 25, 'credited once');
  t.equal((await getAdminPack(app, pack.id)).available, 2, 'three packs granted from a supply of 5');

  const short = await adminGrantRequest(app, reward.id, { userIds: [one.id, two.id, three.id], key: 'k2' });
  t.equal(codeOf(short), 'reward_stock_insufficient', 'two packs left for three grants');
  t.equal(await balance(app, one), 25, 'the refused batch wrote nothing');

  const second = await adminGrantRequest(app, reward.id, { userIds: [one.id], key: 'k2' });
  t.equal(second.statusCode, 200);
  const listed = await app.inject({
    method: 'GET',
    url: '/api/rewards/grants',
    query: { limit: '1' },
    headers: bearer(one.token),
  });
  t.equal(listed.statusCode, 200, listed.body);
  t.equal(listed.json().data[0].sourceKey, `admin:k2:${one.id}`, 'newest first');
  const next = await app.inject({
    method: 'GET',
    url: '/api/rewards/grants',
    query: { limit: '1', cursor: listed.json().nextCursor },
    headers: bearer(one.token),
  });
  t.equal(next.json().data[0].sourceKey, `admin:k:${one.id}`);
  t.equal(next.json().nextCursor, null);
  t.equal((await app.inject({ method: 'GET', url: '/api/rewards/grants' })).statusCode, 401, 'signed in only');

  const grantId = second.json().data[0].grant.id;
  t.equal(codeOf(await revokeRequest(app, 'no-such-grant')), 'grant_not_found');
  t.equal(codeOf(await revokeRequest(app, grantId, { reason: 'x' }, FAN)), 'forbidden');
  t.equal(codeOf(await revokeRequest(app, grantId, { reason: '' })), 'validation_failed');
  const revoked = await revokeRequest(app, grantId, { reason: 'duplicate prize' });
  t.has(revoked.json().data, { status: 'revoked', coinsTakenBack: 25, coinsUncollected: 0, packsTakenBack: 1 });
  t.equal(await balance(app, one), 25);
  t.equal((await getAdminPack(app, pack.id)).available, 2, 'the pack returned to the supply');
  const again = await revokeRequest(app, grantId, { reason: 'again' });
  t.same(again.json().data, revoked.json().data, 'idempotent');
  const shown = await app.inject({ method: 'GET', url: `/api/admin/grants/${grantId}`, headers: bearer(ADMIN) });
  t.same(shown.json().data, revoked.json().data);
  await assertNoViolations(t, app);
});

t.test("a team's rewards are granted and revoked by its editors only", async (t) => {
  const app = await buildTestApp(t);
  const staff = await staffedTeam(app, 'tg');
  const rival = await staffedTeam(app, 'tg-rival');
  const fan = await signIn(app, 'tg-fan');
  const reward = await createReward(app, { teamId: staff.team.id, coins: 9 }, staff.editor);
  t.equal(
    codeOf(await adminGrantRequest(app, reward.id, { userIds: [fan.id], key: 'k' }, rival.owner)),
    'reward_not_found',
    "another team's admins do not see it",
  );
  t.equal(codeOf(await adminGrantRequest(app, reward.id, { userIds: [fan.id], key: 'k' }, staff.viewer)), 'forbidden');
  const granted = await adminGrantRequest(app, reward.id, { userIds: [fan.id], key: 'k' }, staff.editor);
  t.equal(granted.statusCode, 200, granted.body);
  const grantId = granted.json().data[0].grant.id;
  t.equal(codeOf(await revokeRequest(app, grantId, { reason: 'x' }, rival.owner)), 'grant_not_found');
  t.equal(codeOf(await revokeRequest(app, grantId, { reason: 'x' }, staff.viewer)), 'forbidden');
  const revoked = await revokeRequest(app, grantId, { reason: 'wrong fan' }, staff.owner);
  t.has(revoked.json().data, { status: 'revoked', coinsTakenBack: 9 });
  const mine = await app.inject({ method: 'GET', url: '/api/rewards/grants', headers: bearer(fan.token) });
  t.has(mine.json().data, [{ id: grantId, status: 'revoked', revokeReason: 'wrong fan' }], 'the fan sees the reversal');
  await assertNoViolations(t, app);
});
