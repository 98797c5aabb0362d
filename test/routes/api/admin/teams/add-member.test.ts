import t from 'tap';
import { buildTestApp } from '../../../../support/app.js';
import { ADMIN, FAN, sortedKeys } from '../../../../support/catalog.js';
import {
  addMemberRequest,
  codeOf,
  createTeam,
  detailPaths,
  ISO,
  membersOf,
  signIn,
  TEAM_ADMIN_KEYS,
  type TeamAdminView,
  teamAudit,
} from '../../../../support/teams.js';

/**
 * [spec] POST /api/admin/teams/{teamId}/members `{ userId, role? }`: 201 when
 * added, 200 with the same body when the user already has that role, 409 already_member with
 * another role, 404 user_not_found / team_not_found, 403 for callers who may not manage the
 * team, 401 without a token, 400 naming the field. After each call the stored rows are re-read.
 */

t.test('POST /api/admin/teams/{teamId}/members', async (t) => {
  const app = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  const owner = await signIn(app, 'olive');
  const otherOwner = await signIn(app, 'uma');
  for (const user of ['ed', 'vi', 'carol', 'dave', 'erin']) await signIn(app, user);
  await signIn(app, 'fan-1');
  const team = await createTeam(app, { name: 'Members FC', ownerUserId: 'olive' });
  await createTeam(app, { name: 'Other FC', ownerUserId: 'uma' });

  let stored = await membersOf(app, team.id);
  t.same(
    stored.map((m) => [m.userId, m.role, m.addedBy]),
    [['olive', 'owner', 'root']],
    'the new team has its owner only',
  );

  await t.test('platform admin adds a user: 201, role defaults to editor, addedBy is the caller', async (t) => {
    const res = await addMemberRequest(app, team.id, { userId: 'ed' });
    t.equal(res.statusCode, 201);
    const body = res.json();
    t.same(sortedKeys(body), ['data', 'success']);
    t.equal(body.success, true);
    t.same(sortedKeys(body.data), TEAM_ADMIN_KEYS, 'exactly the TeamAdmin fields');
    t.match(body.data, { teamId: team.id, userId: 'ed', role: 'editor', addedBy: 'root' });
    t.match(body.data.createdAt, ISO);
    stored = await membersOf(app, team.id);
    t.same(
      stored.find((m) => m.userId === 'ed'),
      body.data,
      'the stored row is the answer',
    );
    t.equal(stored.length, 2);
  });

  await t.test('the owner adds a viewer and an owner: 201, addedBy is the owner', async (t) => {
    const viewer = await addMemberRequest(app, team.id, { userId: 'vi', role: 'viewer' }, owner);
    t.equal(viewer.statusCode, 201);
    t.match(viewer.json().data, { teamId: team.id, userId: 'vi', role: 'viewer', addedBy: 'olive' });
    const coOwner = await addMemberRequest(app, team.id, { userId: 'carol', role: 'owner' }, owner);
    t.equal(coOwner.statusCode, 201);
    t.match(coOwner.json().data, { userId: 'carol', role: 'owner', addedBy: 'olive' });
    stored = await membersOf(app, team.id);
    t.same(
      stored.map((m) => [m.userId, m.role, m.addedBy]),
      [
        ['carol', 'owner', 'olive'],
        ['ed', 'editor', 'root'],
        ['olive', 'owner', 'root'],
        ['vi', 'viewer', 'olive'],
      ],
    );
  });

  await t.test('the same role again: 200 with the same body, nothing changes', async (t) => {
    const before = await membersOf(app, team.id);
    const ed = before.find((m) => m.userId === 'ed') as TeamAdminView;
    for (const [body, token, label] of [
      [{ userId: 'ed', role: 'editor' }, ADMIN, 'admin, explicit role'],
      [{ userId: 'ed' }, ADMIN, 'admin, default role'],
      [{ userId: 'ed', role: 'editor' }, owner, 'owner (another adder)'],
    ] as const) {
      const res = await addMemberRequest(app, team.id, body, token);
      t.equal(res.statusCode, 200, `${label}: 200`);
      t.same(res.json(), { success: true, data: ed }, `${label}: the stored membership, addedBy and createdAt kept`);
    }
    const vi = before.find((m) => m.userId === 'vi');
    const again = await addMemberRequest(app, team.id, { userId: 'vi', role: 'viewer' });
    t.equal(again.statusCode, 200);
    t.same(again.json().data, vi);
    t.same(await membersOf(app, team.id), before, 'stored rows unchanged');
  });

  await t.test('another role: 409 already_member, the role unchanged', async (t) => {
    const before = await membersOf(app, team.id);
    for (const [body, label] of [
      [{ userId: 'ed', role: 'viewer' }, 'editor asked as viewer'],
      [{ userId: 'ed', role: 'owner' }, 'editor asked as owner'],
      [{ userId: 'vi' }, 'viewer asked with the default role (editor)'],
      [{ userId: 'olive', role: 'editor' }, 'the owner asked as editor'],
    ] as const) {
      const res = await addMemberRequest(app, team.id, body);
      t.equal(res.statusCode, 409, `${label}: 409`);
      t.equal(codeOf(res), 'already_member', label);
      t.equal(res.json().success, false);
    }
    t.same(await membersOf(app, team.id), before, 'stored rows unchanged');
  });

  await t.test('a user never seen: 404 user_not_found, no row', async (t) => {
    const before = await membersOf(app, team.id);
    for (const userId of ['ghost', 'g'.repeat(128)]) {
      for (const token of [ADMIN, owner]) {
        const res = await addMemberRequest(app, team.id, { userId, role: 'viewer' }, token);
        t.equal(res.statusCode, 404, `${userId.slice(0, 10)}: 404`);
        t.equal(codeOf(res), 'user_not_found');
      }
    }
    t.same(await membersOf(app, team.id), before, 'stored rows unchanged');
  });

  await t.test(
    'an unknown team: 404 team_not_found for the platform admin and for an owner of another team',
    async (t) => {
      for (const [token, label] of [
        [ADMIN, 'platform admin'],
        [otherOwner, 'owner of another team'],
        [owner, 'owner of this team, on an unknown id'],
      ] as const) {
        const res = await addMemberRequest(app, 'no-such-team', { userId: 'dave' }, token);
        t.equal(res.statusCode, 404, `${label}: 404`);
        t.equal(codeOf(res), 'team_not_found', label);
      }
    },
  );

  await t.test('callers who may not manage this team', async (t) => {
    const before = await membersOf(app, team.id);
    const editor = await signIn(app, 'ed');
    const viewer = await signIn(app, 'vi');
    for (const [token, label] of [
      [editor, 'editor of the team'],
      [viewer, 'viewer of the team'],
      [FAN, 'a user with no role'],
    ] as const) {
      const res = await addMemberRequest(app, team.id, { userId: 'dave', role: 'owner' }, token);
      t.equal(res.statusCode, 403, `${label}: 403`);
      t.equal(codeOf(res), 'forbidden', label);
    }
    const hidden = await addMemberRequest(app, team.id, { userId: 'dave' }, otherOwner);
    t.equal(hidden.statusCode, 404, 'owner of another team: 404, the team stays hidden');
    t.equal(codeOf(hidden), 'team_not_found');
    const selfPromotion = await addMemberRequest(app, team.id, { userId: 'uma', role: 'owner' }, otherOwner);
    t.equal(selfPromotion.statusCode, 404, 'owner of another team adding itself: 404');
    const anonymous = await addMemberRequest(app, team.id, { userId: 'dave' }, null);
    t.equal(anonymous.statusCode, 401, 'no token: 401');
    t.equal(codeOf(anonymous), 'missing_credentials');
    t.match(anonymous.headers['www-authenticate'], /^Bearer/);
    t.same(await membersOf(app, team.id), before, 'stored rows unchanged');
  });

  await t.test('400 naming the field', async (t) => {
    const before = await membersOf(app, team.id);
    const cases: Array<[unknown, string, string]> = [
      [{ userId: 'dave', role: 'admin' }, '/role', "role 'admin'"],
      [{ userId: 'dave', role: 'superuser' }, '/role', "role 'superuser'"],
      [{ userId: 'dave', role: 'Owner' }, '/role', "role 'Owner' (case matters)"],
      [{ userId: 'dave', role: null }, '/role', 'role null'],
      [{ role: 'viewer' }, '/userId', 'missing userId'],
      [{ userId: '' }, '/userId', "userId ''"],
      [{ userId: 'x'.repeat(129) }, '/userId', 'userId of 129 characters'],
      [{ userId: 42 }, '/userId', 'userId a number'],
      [{ userId: 'dave', extra: true }, '/extra', 'an unknown field'],
      [{ userId: 'dave', teamId: team.id }, '/teamId', 'teamId in the body'],
    ];
    for (const [payload, path, label] of cases) {
      for (const token of [ADMIN, owner]) {
        const res = await addMemberRequest(app, team.id, payload as Record<string, unknown>, token);
        t.equal(res.statusCode, 400, `${label}: 400`);
        t.equal(codeOf(res), 'validation_failed', label);
        t.ok(detailPaths(res).includes(path), `${label}: names ${path} (got ${detailPaths(res).join(', ')})`);
      }
    }
    t.same(await membersOf(app, team.id), before, 'stored rows unchanged');
  });

  await t.test('the audit log records each add, once', async (t) => {
    const adds = (await teamAudit(app, team.id)).filter((entry) => entry.action === 'team.member.add');
    t.same(
      adds.map((entry) => [entry.targetId, entry.actorId]).sort(),
      [
        ['carol', 'olive'],
        ['ed', 'root'],
        ['olive', 'root'],
        ['vi', 'olive'],
      ],
      'one entry per membership created; none for 200s or failures',
    );
    const members = await membersOf(app, team.id);
    for (const entry of adds) {
      t.equal(entry.targetType, 'team_member');
      t.equal(entry.teamId, team.id);
      t.equal(entry.before, null);
      t.same(
        entry.after,
        members.find((m) => m.userId === entry.targetId),
        `${entry.targetId}: after is the stored membership`,
      );
    }
  });
});
