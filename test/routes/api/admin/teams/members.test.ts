import t from 'tap';
import { buildTestApp } from '../../../../support/app.js';
import { ADMIN, FAN, fakeCursor, sortedKeys } from '../../../../support/catalog.js';
import {
  addMember,
  call,
  codeOf,
  createTeam,
  deleteMember,
  detailPaths,
  membersOf,
  membersUrl,
  patchMember,
  rolesOf,
  signIn,
  staffedTeam,
  TEAM_ADMIN_KEYS,
  type TeamAdminView,
  teamAudit,
  teamsOf,
} from '../../../../support/teams.js';

/**
 * GET /api/admin/teams/{teamId}/members (any member role, platform admins), PATCH and DELETE
 * .../members/{userId} (owners, platform admins); GET /api/user follows the changes; the audit log
 * records each of them with before and after.
 */

t.test('team members: list, change, remove', async (t) => {
  const app = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  const { team, owner, editor, viewer } = await staffedTeam(app, 'm');
  const other = await signIn(app, 'uma');
  await createTeam(app, { name: 'Other', slug: 'other', ownerUserId: 'uma' });
  for (const user of ['p1', 'p2', 'p3', 'outsider']) await signIn(app, user);
  await signIn(app, 'fan-1');
  const list = (token: string | null, query: Record<string, string> = {}, teamId = team.id) =>
    call(app, 'GET', membersUrl(teamId), token, { query });

  await t.test('GET members: every member role and the platform admin see the same list', async (t) => {
    const expected = await membersOf(app, team.id);
    t.same(
      expected.map((m) => [m.userId, m.role]),
      [
        ['m-editor', 'editor'],
        ['m-owner', 'owner'],
        ['m-viewer', 'viewer'],
      ],
    );
    for (const [token, label] of [
      [ADMIN, 'platform admin'],
      [owner, 'owner'],
      [editor, 'editor'],
      [viewer, 'viewer'],
    ] as const) {
      const res = await list(token);
      t.equal(res.statusCode, 200, `${label}: 200`);
      const body = res.json();
      t.same(sortedKeys(body), ['data', 'nextCursor', 'success']);
      t.equal(body.nextCursor, null);
      for (const member of body.data) t.same(sortedKeys(member), TEAM_ADMIN_KEYS);
      t.same(
        [...body.data].sort((a: TeamAdminView, b: TeamAdminView) => a.userId.localeCompare(b.userId)),
        expected,
        `${label}: every member`,
      );
      const createdAts = body.data.map((m: TeamAdminView) => m.createdAt);
      t.same(createdAts, [...createdAts].sort().reverse(), `${label}: newest first`);
    }
  });

  await t.test('GET members: filter by role, paginate', async (t) => {
    await addMember(app, team.id, 'p1', 'viewer');
    await addMember(app, team.id, 'p2', 'viewer');
    await addMember(app, team.id, 'p3', 'editor');
    const viewers = await list(owner, { role: 'viewer' });
    t.equal(viewers.statusCode, 200);
    t.same(
      viewers
        .json()
        .data.map((m: TeamAdminView) => m.userId)
        .sort(),
      ['m-viewer', 'p1', 'p2'],
    );
    const owners = await list(viewer, { role: 'owner' });
    t.same(
      owners.json().data.map((m: TeamAdminView) => m.userId),
      ['m-owner'],
    );
    const bad = await list(owner, { role: 'admin' });
    t.equal(bad.statusCode, 400, 'an unknown role filter: 400');
    t.ok(
      detailPaths(bad).some((path) => path.includes('role')),
      'names role',
    );

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(editor, { limit: '2', ...(cursor ? { cursor } : {}) });
      t.equal(res.statusCode, 200);
      t.ok(res.json().data.length <= 2);
      seen.push(...res.json().data.map((m: TeamAdminView) => m.userId));
      cursor = res.json().nextCursor;
      pages++;
    } while (cursor && pages < 10);
    t.equal(pages, 3, '6 members in pages of 2');
    t.same(seen.sort(), ['m-editor', 'm-owner', 'm-viewer', 'p1', 'p2', 'p3'], 'every member once');
    const filteredPage = await list(owner, { role: 'viewer', limit: '2' });
    t.equal(filteredPage.json().data.length, 2);
    t.type(filteredPage.json().nextCursor, 'string', 'a filtered list paginates too');
    for (const query of [{ limit: '0' }, { limit: '201' }, { cursor: 'garbage' }, { cursor: fakeCursor([1]) }] as Array<
      Record<string, string>
    >) {
      t.equal((await list(owner, query)).statusCode, 400, `${JSON.stringify(query)}: 400`);
    }
  });

  await t.test('GET members: hidden from other teams, refused to fans, 401 without a token', async (t) => {
    const hidden = await list(other);
    t.equal(hidden.statusCode, 404, 'owner of another team: 404');
    t.equal(codeOf(hidden), 'team_not_found');
    const unknown = await list(other, {}, 'no-such-team');
    t.same(unknown.json().error.code, hidden.json().error.code, 'the same answer as an unknown team');
    t.equal(unknown.statusCode, 404);
    const unknownAsAdmin = await list(ADMIN, {}, 'no-such-team');
    t.equal(unknownAsAdmin.statusCode, 404);
    t.equal(codeOf(unknownAsAdmin), 'team_not_found');
    const fan = await list(FAN);
    t.equal(fan.statusCode, 403, 'a user with no role: 403');
    t.equal(codeOf(fan), 'forbidden');
    const anonymous = await list(null);
    t.equal(anonymous.statusCode, 401);
  });

  await t.test('PATCH member: the owner changes a role; GET /api/user follows', async (t) => {
    t.same(await teamsOf(app, editor), [{ teamId: team.id, role: 'editor' }], 'the editor’s roles before');
    const before = (await membersOf(app, team.id)).find((m) => m.userId === 'm-editor') as TeamAdminView;
    const res = await patchMember(app, team.id, 'm-editor', { role: 'viewer' }, owner);
    t.equal(res.statusCode, 200);
    t.same(sortedKeys(res.json()), ['data', 'success']);
    t.same(res.json().data, { ...before, role: 'viewer' }, 'only the role changes (createdAt and addedBy kept)');
    t.same(
      (await membersOf(app, team.id)).find((m) => m.userId === 'm-editor'),
      res.json().data,
      'stored',
    );
    t.same(await teamsOf(app, editor), [{ teamId: team.id, role: 'viewer' }], 'GET /api/user shows the new role');

    const back = await patchMember(app, team.id, 'm-editor', { role: 'editor' }, ADMIN);
    t.equal(back.statusCode, 200, 'the platform admin changes it back');
    t.equal(back.json().data.role, 'editor');
    t.same(await teamsOf(app, editor), [{ teamId: team.id, role: 'editor' }]);

    const same = await patchMember(app, team.id, 'm-editor', { role: 'editor' }, owner);
    t.equal(same.statusCode, 200, 'the role it already has: 200');
    t.same(same.json().data, back.json().data, 'unchanged');

    const promote = await patchMember(app, team.id, 'p3', { role: 'owner' }, owner);
    t.equal(promote.statusCode, 200, 'an editor promoted to owner');
    t.same(await teamsOf(app, await signIn(app, 'p3')), [{ teamId: team.id, role: 'owner' }]);
  });

  await t.test('PATCH member: who may not, and bad requests', async (t) => {
    const before = await membersOf(app, team.id);
    for (const [token, status, code, label] of [
      [editor, 403, 'forbidden', 'editor'],
      [viewer, 403, 'forbidden', 'viewer'],
      [FAN, 403, 'forbidden', 'fan'],
      [other, 404, 'team_not_found', 'owner of another team'],
    ] as const) {
      const res = await patchMember(app, team.id, 'p1', { role: 'owner' }, token);
      t.equal(res.statusCode, status, `${label}: ${status}`);
      t.equal(codeOf(res), code, label);
    }
    const selfPromotion = await patchMember(app, team.id, 'm-editor', { role: 'owner' }, editor);
    t.equal(selfPromotion.statusCode, 403, 'an editor cannot make itself owner');
    t.equal((await patchMember(app, team.id, 'p1', { role: 'owner' }, null)).statusCode, 401, 'no token: 401');

    for (const [userId, label] of [
      ['outsider', 'a signed-in user who is not a member'],
      ['uma', 'a member of another team'],
      ['ghost', 'a user never seen'],
    ] as const) {
      const res = await patchMember(app, team.id, userId, { role: 'viewer' }, owner);
      t.equal(res.statusCode, 404, `${label}: 404`);
      t.equal(codeOf(res), 'member_not_found', label);
    }
    const unknownTeam = await patchMember(app, 'no-such-team', 'p1', { role: 'viewer' });
    t.equal(unknownTeam.statusCode, 404);
    t.equal(codeOf(unknownTeam), 'team_not_found');

    for (const [payload, path] of [
      [{ role: 'admin' }, '/role'],
      [{ role: 'superuser' }, '/role'],
      [{}, '/role'],
      [{ role: 'viewer', userId: 'p2' }, '/userId'],
    ] as const) {
      const res = await patchMember(app, team.id, 'p1', payload, owner);
      t.equal(res.statusCode, 400, `${JSON.stringify(payload)}: 400`);
      t.ok(detailPaths(res).includes(path), `names ${path}`);
    }
    t.same(await membersOf(app, team.id), before, 'stored rows unchanged');
  });

  await t.test('DELETE member: answers the removed membership; GET /api/user follows', async (t) => {
    const p1 = await signIn(app, 'p1');
    t.same(await teamsOf(app, p1), [{ teamId: team.id, role: 'viewer' }]);
    const stored = (await membersOf(app, team.id)).find((m) => m.userId === 'p1');
    const res = await deleteMember(app, team.id, 'p1', owner);
    t.equal(res.statusCode, 200);
    t.same(res.json(), { success: true, data: stored }, 'the removed TeamAdmin');
    t.notOk(
      (await membersOf(app, team.id)).some((m) => m.userId === 'p1'),
      'gone from the list',
    );
    t.same(await teamsOf(app, p1), [], 'GET /api/user: no team left');

    const again = await deleteMember(app, team.id, 'p1', owner);
    t.equal(again.statusCode, 404, 'removing again: 404');
    t.equal(codeOf(again), 'member_not_found');

    const byAdmin = await deleteMember(app, team.id, 'p2', ADMIN);
    t.equal(byAdmin.statusCode, 200, 'the platform admin removes a member');
    t.equal(byAdmin.json().data.userId, 'p2');

    const before = await membersOf(app, team.id);
    for (const [token, status, label] of [
      [editor, 403, 'editor'],
      [viewer, 403, 'viewer'],
      [FAN, 403, 'fan'],
      [other, 404, 'owner of another team'],
    ] as const) {
      const res = await deleteMember(app, team.id, 'm-viewer', token);
      t.equal(res.statusCode, status, `${label}: ${status}`);
    }
    const selfRemoval = await deleteMember(app, team.id, 'm-viewer', viewer);
    t.equal(selfRemoval.statusCode, 403, 'a viewer cannot remove itself');
    t.equal((await deleteMember(app, team.id, 'm-viewer', null)).statusCode, 401, 'no token: 401');
    t.equal(
      codeOf(await deleteMember(app, team.id, 'ghost', owner)),
      'member_not_found',
      'a user never seen: member_not_found',
    );
    t.equal(codeOf(await deleteMember(app, 'no-such-team', 'm-viewer')), 'team_not_found');
    t.same(await membersOf(app, team.id), before, 'stored rows unchanged');
  });

  await t.test('a removed member loses access at once', async (t) => {
    const res = await deleteMember(app, team.id, 'm-viewer', owner);
    t.equal(res.statusCode, 200);
    const afterwards = await list(viewer);
    t.equal(afterwards.statusCode, 403, 'no role anywhere now: 403');
    t.same(await rolesOf(app, team.id), { 'm-editor': 'editor', 'm-owner': 'owner', p3: 'owner' });
  });

  await t.test('the audit log records every membership change with before and after', async (t) => {
    const entries = await teamAudit(app, team.id);
    for (const [token, label] of [
      [owner, 'owner'],
      [editor, 'editor'],
    ] as const) {
      t.same(await teamAudit(app, team.id, token), entries, `${label} reads the same team log`);
    }
    const denied = await call(app, 'GET', '/api/admin/audit-log', other, { query: { teamId: team.id } });
    t.equal(denied.statusCode, 404, 'owner of another team: 404');
    t.equal(
      (await call(app, 'GET', '/api/admin/audit-log', FAN, { query: { teamId: team.id } })).statusCode,
      403,
      'fan: 403',
    );

    const createdAts = entries.map((entry) => entry.createdAt);
    t.same(createdAts, [...createdAts].sort().reverse(), 'newest first');
    // Entries of one transaction (or one millisecond) share a createdAt: compare as a set.
    const actions = entries.map((entry) => [entry.action, entry.targetId, entry.actorId]).sort();
    t.same(
      actions,
      [
        ['team.create', team.id, 'root'],
        ['team.member.add', 'm-owner', 'root'],
        ['team.member.add', 'm-editor', 'root'],
        ['team.member.add', 'm-viewer', 'root'],
        ['team.member.add', 'p1', 'root'],
        ['team.member.add', 'p2', 'root'],
        ['team.member.add', 'p3', 'root'],
        ['team.member.update', 'm-editor', 'm-owner'],
        ['team.member.update', 'm-editor', 'root'],
        ['team.member.update', 'p3', 'm-owner'],
        ['team.member.remove', 'p1', 'm-owner'],
        ['team.member.remove', 'p2', 'root'],
        ['team.member.remove', 'm-viewer', 'm-owner'],
      ].sort(),
      'one entry per change, none for no-ops or refusals',
    );
    const teamCreate = entries.find((entry) => entry.action === 'team.create');
    t.match(teamCreate, { targetType: 'team', before: null, after: { id: team.id, slug: 'm-team' } });
    for (const entry of entries.filter((entry) => entry.action.startsWith('team.member'))) {
      t.equal(entry.targetType, 'team_member', `${entry.action} ${entry.targetId}: targetType`);
      t.equal(entry.teamId, team.id);
    }
    const update = entries.find(
      (entry) => entry.action === 'team.member.update' && entry.actorId === 'm-owner' && entry.targetId === 'm-editor',
    );
    t.match(update?.before, { teamId: team.id, userId: 'm-editor', role: 'editor' }, 'update: before');
    t.match(update?.after, { teamId: team.id, userId: 'm-editor', role: 'viewer' }, 'update: after');
    t.equal(
      (update?.before as TeamAdminView | undefined)?.createdAt,
      (update?.after as TeamAdminView | undefined)?.createdAt,
      'createdAt kept',
    );
    const removal = entries.find((entry) => entry.action === 'team.member.remove' && entry.targetId === 'p1');
    t.match(removal?.before, { teamId: team.id, userId: 'p1', role: 'viewer', addedBy: 'root' }, 'remove: before');
    t.equal(removal?.after, null, 'remove: after is null');
  });
});
