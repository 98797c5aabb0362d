import type { LightMyRequestResponse } from 'fastify';
import t from 'tap';
import { buildTestApp, suiteServer } from '../../../../support/app.js';
import { ADMIN } from '../../../../support/catalog.js';
import {
  addMember,
  addMemberRequest,
  codeOf,
  createTeam,
  deleteMember,
  membersOf,
  patchMember,
  rolesOf,
  signIn,
  teamAudit,
} from '../../../../support/teams.js';

/**
 * A team always keeps at least one owner: the last owner can be neither demoted nor removed (409
 * last_owner), also when two owners demote or remove each other at the same moment (one wins;
 * the other is no longer allowed). Runs on both databases (npm test, npm run test:pg).
 */

const ROUNDS = 10;

/** A subtest's `t` (the last overload of t.test takes only the callback). */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

t.comment(`database: ${suiteServer}`);

t.test('the last owner can be neither demoted nor removed', async (t) => {
  const app = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  const solo = await signIn(app, 'solo');
  await signIn(app, 'second');
  await signIn(app, 'helper');
  const team = await createTeam(app, { ownerUserId: 'solo' });
  await addMember(app, team.id, 'helper', 'editor');

  const before = await membersOf(app, team.id);
  for (const [token, label] of [
    [solo, 'the owner itself'],
    [ADMIN, 'the platform admin'],
  ] as const) {
    for (const role of ['editor', 'viewer'] as const) {
      const res = await patchMember(app, team.id, 'solo', { role }, token);
      t.equal(res.statusCode, 409, `${label} demoting the last owner to ${role}: 409`);
      t.equal(codeOf(res), 'last_owner');
    }
    const removed = await deleteMember(app, team.id, 'solo', token);
    t.equal(removed.statusCode, 409, `${label} removing the last owner: 409`);
    t.equal(codeOf(removed), 'last_owner');
  }
  const same = await patchMember(app, team.id, 'solo', { role: 'owner' }, solo);
  t.equal(same.statusCode, 200, 'owner → owner is no change: 200');
  t.same(await membersOf(app, team.id), before, 'stored rows unchanged');
  t.notOk(
    (await teamAudit(app, team.id)).some(
      (entry) => entry.action !== 'team.create' && entry.action !== 'team.member.add',
    ),
    'refusals leave no audit entry',
  );

  await t.test('with two owners one can be demoted, then the other is the last', async (t) => {
    await addMember(app, team.id, 'second', 'owner', solo);
    const demoted = await patchMember(app, team.id, 'solo', { role: 'viewer' }, solo);
    t.equal(demoted.statusCode, 200, 'an owner demotes itself while another owner remains');
    t.same(await rolesOf(app, team.id), { helper: 'editor', second: 'owner', solo: 'viewer' });
    const last = await patchMember(app, team.id, 'second', { role: 'editor' }, ADMIN);
    t.equal(last.statusCode, 409);
    t.equal(codeOf(last), 'last_owner');
    const lastRemoved = await deleteMember(app, team.id, 'second', ADMIN);
    t.equal(codeOf(lastRemoved), 'last_owner');
    t.same(await rolesOf(app, team.id), { helper: 'editor', second: 'owner', solo: 'viewer' }, 'unchanged');
  });

  await t.test('with two owners one can be removed', async (t) => {
    const promoted = await patchMember(app, team.id, 'helper', { role: 'owner' }, ADMIN);
    t.equal(promoted.statusCode, 200);
    const removed = await deleteMember(app, team.id, 'second', ADMIN);
    t.equal(removed.statusCode, 200);
    t.same(await rolesOf(app, team.id), { helper: 'owner', solo: 'viewer' });
    const last = await deleteMember(app, team.id, 'helper', ADMIN);
    t.equal(codeOf(last), 'last_owner');
  });

  await t.test('non-owners can always be demoted or removed', async (t) => {
    const res = await deleteMember(app, team.id, 'solo', ADMIN);
    t.equal(res.statusCode, 200, 'a viewer removed from a team with one owner');
    t.same(await rolesOf(app, team.id), { helper: 'owner' });
  });
});

/** A fresh team whose only owners are A and B (signed in); their tokens. */
async function twoOwnerTeam(app: Parameters<typeof addMember>[0], round: number) {
  const a = await signIn(app, `alpha-${round}`);
  const b = await signIn(app, `beta-${round}`);
  const team = await createTeam(app, { ownerUserId: `alpha-${round}` });
  await addMember(app, team.id, `beta-${round}`, 'owner');
  return { team, a, b, aId: `alpha-${round}`, bId: `beta-${round}` };
}

/** How the losers of the races were refused, for the log. */
const refusals: Record<string, number> = {};

/**
 * One 200 and one refusal; returns the index of the winner. Changes of one team are serialized
 * and the caller's role is read again under the team's lock, so the loser is judged as it stands
 * after the winner's change: no longer an owner. Demoted, it gets 403 forbidden; removed, it gets
 * 403 forbidden when it has no admin role anywhere, or 404 team_not_found when it does (it can no
 * longer see this team). Never 409 last_owner: the team still has an owner, the winner.
 */
function oneWinner(t: Test, responses: LightMyRequestResponse[], label: string, allowed: string[]): number {
  const statuses = responses.map((res) => res.statusCode);
  t.equal(
    statuses.filter((status) => status === 200).length,
    1,
    `${label}: exactly one succeeds (got ${statuses.join(', ')})`,
  );
  const loser = responses.find((res) => res.statusCode !== 200);
  const refusal = loser ? `${loser.statusCode} ${codeOf(loser)}` : 'none';
  refusals[refusal] = (refusals[refusal] ?? 0) + 1;
  t.ok(allowed.includes(refusal), `${label}: the other gets ${allowed.join(' or ')} (got ${refusal})`);
  return statuses.indexOf(200);
}

t.test(`two owners demote each other at the same moment (${ROUNDS} rounds)`, async (t) => {
  const app = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  const winners = [0, 0];
  for (let round = 0; round < ROUNDS; round++) {
    const { team, a, b, aId, bId } = await twoOwnerTeam(app, round);
    const aDemotesB = () => patchMember(app, team.id, bId, { role: 'editor' }, a);
    const bDemotesA = () => patchMember(app, team.id, aId, { role: 'editor' }, b);
    const responses =
      round % 2 === 0
        ? await Promise.all([aDemotesB(), bDemotesA()])
        : (await Promise.all([bDemotesA(), aDemotesB()])).reverse();
    const winner = oneWinner(t, responses, `round ${round}`, ['403 forbidden']);
    winners[winner] = (winners[winner] ?? 0) + 1;
    const roles = await rolesOf(app, team.id);
    t.equal(
      Object.values(roles).filter((role) => role === 'owner').length,
      1,
      `round ${round}: exactly one owner left`,
    );
    t.same(
      roles,
      winner === 0 ? { [aId]: 'owner', [bId]: 'editor' } : { [aId]: 'editor', [bId]: 'owner' },
      `round ${round}: the winner is the owner, the other its editor`,
    );
    const updates = (await teamAudit(app, team.id)).filter((entry) => entry.action === 'team.member.update');
    t.equal(updates.length, 1, `round ${round}: one audited update`);
  }
  t.comment(`A won ${winners[0]} rounds, B won ${winners[1]}; refusals so far: ${JSON.stringify(refusals)}`);
});

t.test(`two owners remove each other at the same moment (${ROUNDS} rounds)`, async (t) => {
  const app = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  for (let round = 0; round < ROUNDS; round++) {
    const { team, a, b, aId, bId } = await twoOwnerTeam(app, round);
    const aRemovesB = () => deleteMember(app, team.id, bId, a);
    const bRemovesA = () => deleteMember(app, team.id, aId, b);
    const responses =
      round % 2 === 0
        ? await Promise.all([aRemovesB(), bRemovesA()])
        : (await Promise.all([bRemovesA(), aRemovesB()])).reverse();
    const winner = oneWinner(t, responses, `round ${round}`, ['403 forbidden']);
    const roles = await rolesOf(app, team.id);
    t.same(
      roles,
      winner === 0 ? { [aId]: 'owner' } : { [bId]: 'owner' },
      `round ${round}: exactly one owner left, the winner`,
    );
    const removals = (await teamAudit(app, team.id)).filter((entry) => entry.action === 'team.member.remove');
    t.equal(removals.length, 1, `round ${round}: one audited removal`);
  }
  t.comment(`refusals so far: ${JSON.stringify(refusals)}`);
});

t.test(
  'removed by the other owner first, an owner with another team gets 404 team_not_found: it can no longer see this team',
  async (t) => {
    const app = await buildTestApp(t);
    await signIn(app, 'root', { role: 'admin' });
    for (let round = 0; round < ROUNDS; round++) {
      const { team, a, b, aId, bId } = await twoOwnerTeam(app, round);
      // Both also sit in another team, so neither is refused for having no admin role at all.
      const elsewhere = await createTeam(app, { ownerUserId: aId });
      await addMember(app, elsewhere.id, bId, 'viewer');
      const responses = await Promise.all([deleteMember(app, team.id, bId, a), deleteMember(app, team.id, aId, b)]);
      oneWinner(t, responses, `round ${round}`, ['404 team_not_found']);
      t.equal(Object.values(await rolesOf(app, team.id)).filter((role) => role === 'owner').length, 1);
    }
  },
);

t.test('an owner demoting the other while that one removes it: the team keeps an owner', async (t) => {
  const app = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  for (let round = 0; round < ROUNDS; round++) {
    const { team, a, b, aId, bId } = await twoOwnerTeam(app, round);
    const responses = await Promise.all([
      patchMember(app, team.id, bId, { role: 'viewer' }, a),
      deleteMember(app, team.id, aId, b),
    ]);
    oneWinner(t, responses, `round ${round}`, ['403 forbidden']);
    const roles = await rolesOf(app, team.id);
    t.equal(
      Object.values(roles).filter((role) => role === 'owner').length,
      1,
      `round ${round}: exactly one owner (${JSON.stringify(roles)})`,
    );
  }
});

t.test('10 concurrent identical add-member calls: one 201, nine 200, one row', async (t) => {
  const app = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  const owner = await signIn(app, 'owner');
  await signIn(app, 'newcomer');
  for (const [token, label] of [
    [ADMIN, 'platform admin'],
    [owner, 'owner'],
  ] as const) {
    const team = await createTeam(app, { ownerUserId: 'owner' });
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => addMemberRequest(app, team.id, { userId: 'newcomer', role: 'viewer' }, token)),
    );
    const statuses = responses.map((res) => res.statusCode);
    t.equal(statuses.filter((status) => status === 201).length, 1, `${label}: one 201 (got ${statuses.join(', ')})`);
    t.equal(statuses.filter((status) => status === 200).length, 9, `${label}: nine 200`);
    const created = responses.find((res) => res.statusCode === 201)?.json().data;
    for (const res of responses)
      t.same(res.json(), { success: true, data: created }, `${label}: every answer is the same membership`);
    const members = await membersOf(app, team.id);
    t.same(
      members.filter((m) => m.userId === 'newcomer'),
      [created],
      `${label}: one stored row`,
    );
    const adds = (await teamAudit(app, team.id)).filter(
      (entry) => entry.action === 'team.member.add' && entry.targetId === 'newcomer',
    );
    t.equal(adds.length, 1, `${label}: one audit entry`);
  }
});

/**
 * An owner demoted (or removed) by another owner while its own request is in flight: every
 * sequential order of the two requests leaves it without the owner role (its own call comes first
 * and changes nothing, or comes second and is refused), so the concurrent outcome must too.
 */
t.test('a demoted or removed owner cannot win its role back with a request already in flight', async (t) => {
  const app = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  const kept = { demote: 0, remove: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const demotion = await twoOwnerTeam(app, round);
    const [demoted, selfPromotion] = await Promise.all([
      patchMember(app, demotion.team.id, demotion.bId, { role: 'editor' }, demotion.a),
      patchMember(app, demotion.team.id, demotion.bId, { role: 'owner' }, demotion.b),
    ]);
    t.equal(demoted.statusCode, 200, `round ${round}: the demotion succeeds`);
    t.ok([200, 403].includes(selfPromotion.statusCode), `round ${round}: the self-promotion is a no-op 200 or a 403`);
    if ((await rolesOf(app, demotion.team.id))[demotion.bId] === 'owner') kept.demote++;

    const removal = await twoOwnerTeam(app, round + ROUNDS);
    const [removed, selfAdd] = await Promise.all([
      deleteMember(app, removal.team.id, removal.bId, removal.a),
      addMemberRequest(app, removal.team.id, { userId: removal.bId, role: 'owner' }, removal.b),
    ]);
    t.equal(removed.statusCode, 200, `round ${round}: the removal succeeds`);
    t.ok(
      [200, 201, 403, 404].includes(selfAdd.statusCode),
      `round ${round}: the self-add answers (got ${selfAdd.statusCode})`,
    );
    if ((await rolesOf(app, removal.team.id))[removal.bId] !== undefined) kept.remove++;
  }
  t.equal(kept.demote, 0, `no demoted owner is owner again (${kept.demote} of ${ROUNDS} rounds were)`);
  t.equal(kept.remove, 0, `no removed owner is a member again (${kept.remove} of ${ROUNDS} rounds were)`);
});
