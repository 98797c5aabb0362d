import t from 'tap';
import { bearer, buildTestApp, tokenFor } from '../../../support/app.js';
import { assertValidation, auditLog, insertTeam } from '../../../support/catalog.js';
import { errorCode, expectStatus, signIn } from '../../../support/economy.js';
import { createQuest, createReward, publishQuest, questRequest } from '../../../support/quests.js';
import { addMember } from '../../../support/teams.js';

/** Admins of a quest's scope run it: drafts edited freely, criteria frozen once active. */

const count = { kind: 'count', event: 'pack.opened', count: 3 };

t.test('the lifecycle: draft, active (criteria frozen), ended', async (t) => {
  const app = await buildTestApp(t);
  const reward = await createReward(app);
  const quest = await createQuest(app, {
    rewardId: reward.id,
    criteria: count,
    period: 'weekly',
    timeZone: 'europe/paris',
  });
  t.match(quest, { status: 'draft', period: 'weekly', timeZone: 'Europe/Paris', completions: 0, publishedAt: null });

  const edited = await questRequest(app, 'PATCH', `/api/admin/quests/${quest.id}`, {
    criteria: { ...count, count: 4 },
    name: '  Open four packs  ',
  });
  expectStatus(edited, 200, 'edit a draft');
  t.match(edited.json().data, { name: 'Open four packs', criteria: { count: 4 } });

  const published = await publishQuest(app, quest.id);
  t.match(published, { status: 'active' });
  t.ok(published.publishedAt);
  const publicList = await app.inject({ method: 'GET', url: '/api/quests' });
  t.same(
    publicList.json().data.map((item: { id: string }) => item.id),
    [quest.id],
    'listed once active',
  );

  for (const patch of [{ criteria: count }, { timeZone: 'UTC' }, { period: 'daily' }, { rewardId: reward.id }]) {
    const refused = await questRequest(app, 'PATCH', `/api/admin/quests/${quest.id}`, patch);
    t.equal(refused.statusCode, 409, `active: ${Object.keys(patch)[0]} is frozen`);
    t.equal(errorCode(refused), 'quest_immutable');
  }
  expectStatus(
    await questRequest(app, 'PATCH', `/api/admin/quests/${quest.id}`, {
      name: 'Renamed',
      endsAt: '2099-01-01T00:00:00.000Z',
    }),
    200,
    'name and end stay editable',
  );
  const again = await questRequest(app, 'POST', `/api/admin/quests/${quest.id}`, { action: 'publish' });
  t.equal(errorCode(again), 'invalid_transition');
  expectStatus(await questRequest(app, 'POST', `/api/admin/quests/${quest.id}`, { action: 'end' }), 200, 'end');
  const after = await questRequest(app, 'PATCH', `/api/admin/quests/${quest.id}`, { name: 'Late' });
  t.equal(errorCode(after), 'quest_immutable', 'nothing changes once ended');
  const publicAfter = await app.inject({ method: 'GET', url: '/api/quests' });
  t.same(publicAfter.json().data, [], 'an ended quest leaves the list');
  const ended = await app.inject({ method: 'GET', url: `/api/quests/${quest.id}` });
  t.match(ended.json().data, { status: 'ended' }, 'and stays readable');

  const actions = (await auditLog(app, { targetId: quest.id })).map((entry) => entry.action);
  t.same(actions, ['quest.end', 'quest.update', 'quest.publish', 'quest.update', 'quest.create']);
});

t.test('wrong and hostile quests are refused with the field named', async (t) => {
  const app = await buildTestApp(t);
  const reward = await createReward(app);
  const cases: [string, Record<string, unknown>, string][] = [
    ['unknown zone', { timeZone: 'Mars/Olympus' }, '/timeZone'],
    ['an offset is not a zone', { timeZone: '+01:00' }, '/timeZone'],
    ['end before start', { startsAt: '2026-12-01T00:00:00.000Z', endsAt: '2026-11-01T00:00:00.000Z' }, '/endsAt'],
    ['unknown criteria kind', { criteria: { kind: 'vibes', count: 1 } }, '/criteria/kind'],
    ['zero count', { criteria: { ...count, count: 0 } }, '/criteria/count'],
    ['unknown event', { criteria: { ...count, event: 'wallet.debited' } }, '/criteria/event'],
    [
      'streak on a daily quest',
      { period: 'daily', criteria: { kind: 'streak', event: 'pack.opened', length: 3, unit: 'day' } },
      '/period',
    ],
    ['duplicate set member', { criteria: { kind: 'collect', collectibleIds: ['a', 'a'] } }, '/criteria/collectibleIds'],
    ['extra field', { criteria: count, sneaky: true }, '/sneaky'],
  ];
  for (const [what, body, path] of cases) {
    const res = await questRequest(app, 'POST', '/api/admin/quests', {
      name: 'Q',
      rewardId: reward.id,
      criteria: count,
      ...body,
    });
    t.equal(res.statusCode, 400, what);
    t.ok(
      (res.json().error.details as { path: string }[]).some((detail) => detail.path.startsWith(path)),
      `${what}: names ${path}`,
    );
  }
  const unknownReward = await questRequest(app, 'POST', '/api/admin/quests', {
    name: 'Q',
    rewardId: 'nope',
    criteria: count,
  });
  t.equal(errorCode(unknownReward), 'reward_not_found');
  assertValidation(
    t,
    await questRequest(app, 'POST', '/api/admin/quests', { rewardId: reward.id, criteria: count }),
    ['/name'],
    'no name',
  );
});

t.test(
  'team scope: editors run their team’s quests with their team’s rewards; viewers and others cannot',
  async (t) => {
    const app = await buildTestApp(t);
    const teamId = await insertTeam(app);
    const editor = await signIn(app, 'quest-editor');
    const viewer = await signIn(app, 'quest-viewer');
    const stranger = await signIn(app, 'quest-stranger');
    await addMember(app, teamId, editor.id, 'editor');
    await addMember(app, teamId, viewer.id, 'viewer');
    const teamReward = await createReward(app, { teamId });
    const platformReward = await createReward(app);

    const mixed = await questRequest(
      app,
      'POST',
      '/api/admin/quests',
      { name: 'Q', teamId, rewardId: platformReward.id, criteria: count },
      editor.token,
    );
    t.equal(errorCode(mixed), 'reward_not_found', 'a team quest gives its team’s rewards only');
    const quest = await createQuest(app, { teamId, rewardId: teamReward.id, criteria: count }, editor.token);
    await publishQuest(app, quest.id, editor.token);

    const byViewer = await questRequest(app, 'POST', `/api/admin/quests/${quest.id}`, { action: 'end' }, viewer.token);
    t.equal(byViewer.statusCode, 403, 'a viewer reads but does not run');
    expectStatus(
      await questRequest(app, 'GET', `/api/admin/quests/${quest.id}`, undefined, viewer.token),
      200,
      'viewer reads',
    );
    const byStranger = await questRequest(app, 'GET', `/api/admin/quests/${quest.id}`, undefined, stranger.token);
    t.equal(byStranger.statusCode, 403, 'no admin role anywhere');
    const platform = await questRequest(
      app,
      'POST',
      '/api/admin/quests',
      { name: 'Q', rewardId: platformReward.id, criteria: count },
      editor.token,
    );
    t.equal(platform.statusCode, 403, 'platform quests are the platform admins’');
    const listed = await questRequest(app, 'GET', `/api/admin/quests?teamId=${teamId}`, undefined, editor.token);
    t.same(
      listed.json().data.map((item: { id: string }) => item.id),
      [quest.id],
    );
    const badToken = await app.inject({
      method: 'GET',
      url: '/api/quests',
      headers: bearer(tokenFor('x', {}, 'wrong-secret-wrong-secret-wrong-secret')),
    });
    t.equal(badToken.statusCode, 401, 'a bad token on a public list is refused, not ignored');
  },
);
