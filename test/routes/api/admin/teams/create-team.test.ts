import t from 'tap';
import type { App } from '../../../../../app.js';
import { buildTestApp } from '../../../../support/app.js';
import { withSlugSuffix } from '../../../../../plugins/app/teams/rules.js';
import { ADMIN, FAN, sortedKeys } from '../../../../support/catalog.js';
import {
  addMember,
  call,
  codeOf,
  createTeam,
  detailPaths,
  ISO,
  membersOf,
  signIn,
  TEAM_KEYS,
  type TeamView,
  teamAudit,
  teamsOf,
  UUID,
} from '../../../../support/teams.js';

/**
 * POST /api/admin/teams (platform admins only): `{ name, slug?, ownerUserId? }` → 201 the team;
 * the slug defaults from the name, the first owner defaults to the caller.
 */

const post = (app: App, payload: unknown, token: string | null = ADMIN) =>
  call(app, 'POST', '/api/admin/teams', token, { payload });

/** Every team, as the public list shows them. */
async function allTeams(app: App): Promise<TeamView[]> {
  const res = await call(app, 'GET', '/api/teams', null, { query: { limit: '200' } });
  t.equal(res.statusCode, 200);
  return res.json().data;
}

t.test('POST /api/admin/teams', async (t) => {
  const app = await buildTestApp(t);
  const root = await signIn(app, 'root', { role: 'admin' });
  await signIn(app, 'olive');

  await t.test('201: the team, its slug from the name, and the caller as its owner', async (t) => {
    const res = await post(app, { name: 'FC Köln 1948' });
    t.equal(res.statusCode, 201);
    const body = res.json();
    t.same(sortedKeys(body), ['data', 'success']);
    t.equal(body.success, true);
    t.same(sortedKeys(body.data), TEAM_KEYS, 'exactly { id, name, slug, createdAt }');
    t.match(body.data, { name: 'FC Köln 1948', slug: 'fc-koln-1948' });
    t.match(body.data.id, UUID);
    t.match(body.data.createdAt, ISO);

    const read = await call(app, 'GET', `/api/teams/${body.data.id}`, null);
    t.same(read.json(), { success: true, data: body.data }, 'stored as answered');

    const members = await membersOf(app, body.data.id);
    t.equal(members.length, 1, 'one member');
    t.match(
      members[0],
      { teamId: body.data.id, userId: 'root', role: 'owner', addedBy: 'root' },
      'the caller is the owner',
    );
    t.same(await teamsOf(app, root), [{ teamId: body.data.id, role: 'owner' }], 'GET /api/user lists the new role');

    const audit = await teamAudit(app, body.data.id);
    t.same(
      audit.map((entry) => entry.action).sort(),
      ['team.create', 'team.member.add'],
      'audited: the team and its first owner',
    );
    const created = audit.find((entry) => entry.action === 'team.create');
    t.match(created, {
      actorId: 'root',
      targetType: 'team',
      targetId: body.data.id,
      teamId: body.data.id,
      before: null,
    });
    t.same(created?.after, body.data, 'after: the team');
    const ownerAdd = audit.find((entry) => entry.action === 'team.member.add');
    t.match(ownerAdd, {
      actorId: 'root',
      targetType: 'team_member',
      targetId: 'root',
      teamId: body.data.id,
      before: null,
    });
    t.same(ownerAdd?.after, members[0], 'after: the owner membership');
  });

  await t.test('slugs made from names', async (t) => {
    const cases: Array<[string, string]> = [
      ['  Real   Madrid  C.F. ', 'real-madrid-c-f'],
      ['Atlético de Madrid', 'atletico-de-madrid'],
      ['ÅÄÖ Ümlaut Ñ', 'aao-umlaut-n'],
      ['1. FC Nürnberg', '1-fc-nurnberg'],
    ];
    for (const [name, slug] of cases) {
      const res = await post(app, { name });
      t.equal(res.statusCode, 201, `${JSON.stringify(name)}: 201`);
      t.equal(res.json().data.slug, slug, `${JSON.stringify(name)} → ${slug}`);
      t.equal(res.json().data.name, name.trim(), 'the name is stored trimmed');
    }
    const long = await post(app, { name: `${'Long name '.repeat(11)}x` });
    t.equal(long.statusCode, 201, 'a long name still gives a valid slug');
    t.ok(long.json().data.slug.length <= 60, 'at most 60 characters');
    t.match(long.json().data.slug, /^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  await t.test('an explicit slug', async (t) => {
    const res = await post(app, { name: 'Explicit', slug: 'my-club-2' });
    t.equal(res.statusCode, 201);
    t.equal(res.json().data.slug, 'my-club-2');
    const single = await post(app, { name: 'Single', slug: 'x' });
    t.equal(single.statusCode, 201, 'a one-character slug');
  });

  await t.test('bad slugs and bad bodies: 400 naming the field, nothing created', async (t) => {
    const before = await allTeams(app);
    const cases: Array<[unknown, string, string]> = [
      [{ name: 'A', slug: 'Bad Slug' }, '/slug', 'slug with a capital and a space'],
      [{ name: 'A', slug: '-x' }, '/slug', 'slug starting with a dash'],
      [{ name: 'A', slug: 'x-' }, '/slug', 'slug ending with a dash'],
      [{ name: 'A', slug: 'a--b' }, '/slug', 'slug with a double dash'],
      [{ name: 'A', slug: '' }, '/slug', 'empty slug'],
      [{ name: 'A', slug: 'köln' }, '/slug', 'slug with a non-ASCII letter'],
      [{ name: 'A', slug: 'a'.repeat(61) }, '/slug', 'slug of 61 characters'],
      [{ name: '' }, '/name', 'empty name'],
      [{ name: '   ' }, '/name', 'blank name'],
      [{ name: 'n'.repeat(121) }, '/name', 'name of 121 characters'],
      [{}, '/name', 'missing name'],
      [{ name: 'A', ownerUserId: '' }, '/ownerUserId', 'empty ownerUserId'],
      [{ name: 'A', ownerUserId: 'o'.repeat(129) }, '/ownerUserId', 'ownerUserId of 129 characters'],
      [{ name: 'A', id: 'chosen' }, '/id', 'an unknown field'],
    ];
    for (const [payload, path, label] of cases) {
      const res = await post(app, payload);
      t.equal(res.statusCode, 400, `${label}: 400`);
      t.equal(codeOf(res), 'validation_failed', label);
      t.ok(detailPaths(res).includes(path), `${label}: names ${path} (got ${detailPaths(res).join(', ')})`);
    }
    t.same(await allTeams(app), before, 'no team created');
  });

  await t.test('a taken slug the caller chose: 409 slug_taken, nothing created', async (t) => {
    const first = await post(app, { name: 'Dup', slug: 'dup-club' });
    t.equal(first.statusCode, 201);
    const before = await allTeams(app);
    const explicit = await post(app, { name: 'Another name', slug: 'dup-club' });
    t.equal(explicit.statusCode, 409, 'explicit slug taken');
    t.equal(codeOf(explicit), 'slug_taken');
    t.same(await allTeams(app), before, 'no team created');
  });

  await t.test('a taken slug made from the name gets a short suffix', async (t) => {
    const derived = await post(app, { name: 'Dup Club' });
    t.equal(derived.statusCode, 201, 'created although dup-club is taken');
    t.match(derived.json().data.slug, /^dup-club-[0-9a-f]{4}$/);
    // Names without Latin letters all make the slug "team": the second is no longer a 409.
    const slugs: string[] = [];
    for (const name of ['東京', 'Αθήνα', 'القاهرة', '東京']) {
      const res = await post(app, { name });
      t.equal(res.statusCode, 201, `${name}: 201`);
      slugs.push(res.json().data.slug);
    }
    t.equal(new Set(slugs).size, 4, `four different slugs: ${slugs.join(', ')}`);
    t.ok(slugs.every((slug) => /^team(-[0-9a-f]{4})?$/.test(slug)));
    const long = await post(app, { name: `${'Long name '.repeat(10)}` });
    const longAgain = await post(app, { name: `${'Long name '.repeat(10)}` });
    t.equal(longAgain.statusCode, 201);
    t.ok(longAgain.json().data.slug.length <= 60, 'the suffix keeps the slug within 60 characters');
    t.not(longAgain.json().data.slug, long.json().data.slug);
  });

  await t.test('withSlugSuffix', async (t) => {
    t.equal(withSlugSuffix('team', 'ab12'), 'team-ab12');
    t.equal(withSlugSuffix('a'.repeat(60), 'ab12'), `${'a'.repeat(55)}-ab12`);
    t.equal(
      withSlugSuffix(`${'a'.repeat(54)}-bbbbb`, 'ab12'),
      `${'a'.repeat(54)}-ab12`,
      'no double dash where the cut falls',
    );
  });

  await t.test('ownerUserId: that user becomes the owner, the caller does not', async (t) => {
    const res = await post(app, { name: 'Olive United', ownerUserId: 'olive' });
    t.equal(res.statusCode, 201);
    const members = await membersOf(app, res.json().data.id);
    t.same(
      members.map((m) => [m.userId, m.role, m.addedBy]),
      [['olive', 'owner', 'root']],
    );
  });

  await t.test('an unknown ownerUserId: 404 user_not_found, no team, no audit entry', async (t) => {
    const before = await allTeams(app);
    const auditBefore = await call(app, 'GET', '/api/admin/audit-log', ADMIN, { query: { limit: '200' } });
    const res = await post(app, { name: 'Ghost Town', slug: 'ghost-town', ownerUserId: 'ghost' });
    t.equal(res.statusCode, 404);
    t.equal(codeOf(res), 'user_not_found');
    t.same(await allTeams(app), before, 'no team created');
    const retry = await post(app, { name: 'Ghost Town', slug: 'ghost-town' });
    t.equal(retry.statusCode, 201, 'the slug is still free');
    const auditAfter = await call(app, 'GET', '/api/admin/audit-log', ADMIN, { query: { limit: '200' } });
    t.equal(auditAfter.json().data.length, auditBefore.json().data.length + 2, 'only the retry is audited');
  });

  await t.test('platform admins only: 403 for owners, editors, viewers and fans; 401 without a token', async (t) => {
    const owner = await signIn(app, 'team-owner');
    const editor = await signIn(app, 'team-editor');
    const viewer = await signIn(app, 'team-viewer');
    const team = await createTeam(app, { ownerUserId: 'team-owner' });
    await addMember(app, team.id, 'team-editor', 'editor');
    await addMember(app, team.id, 'team-viewer', 'viewer');
    const before = await allTeams(app);
    for (const [token, label] of [
      [owner, 'owner'],
      [editor, 'editor'],
      [viewer, 'viewer'],
      [FAN, 'fan'],
    ] as const) {
      for (const payload of [{ name: `By ${label}` }, { name: `By ${label} for self`, ownerUserId: 'team-owner' }]) {
        const res = await post(app, payload, token);
        t.equal(res.statusCode, 403, `${label}: 403`);
        t.equal(codeOf(res), 'forbidden', label);
      }
    }
    const anonymous = await post(app, { name: 'Anonymous' }, null);
    t.equal(anonymous.statusCode, 401);
    t.equal(codeOf(anonymous), 'missing_credentials');
    t.same(await allTeams(app), before, 'no team created');
  });
});
