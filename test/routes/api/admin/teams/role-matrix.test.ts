import type { LightMyRequestResponse } from 'fastify';
import t from 'tap';
import type { App } from '../../../../../app.js';
import { buildTestApp } from '../../../../support/app.js';
import { ADMIN, createCollectible, createPack, FAN, getAdminPack, packInStatus } from '../../../../support/catalog.js';
import {
  addMember,
  call,
  codeOf,
  createTeam,
  membersUrl,
  rolesOf,
  signIn,
  staffedTeam,
} from '../../../../support/teams.js';

/**
 * The role × action matrix over HTTP: for a team T
 * with an owner, an editor and a viewer, plus a platform admin, an owner of another team U and a
 * fan with no role, every admin endpoint on T's resources and on platform resources. Each cell's
 * expected status is written out by hand; a refused write must leave the stored state as it was,
 * an allowed one must change it.
 */

const CALLERS = ['admin', 'owner', 'editor', 'viewer', 'other', 'fan'] as const;
type Caller = (typeof CALLERS)[number];
type Expect = Record<Caller, number>;

/** `a o e v x f`: admin, owner, editor, viewer, other team's owner, fan. */
const row = (admin: number, owner: number, editor: number, viewer: number, other: number, fan: number): Expect => ({
  admin,
  owner,
  editor,
  viewer,
  other,
  fan,
});

interface Cell<C> {
  name: string;
  expect: Expect;
  /** The error code of a 404 in this cell. */
  notFound?: string;
  /** Per-caller fixtures, made by the platform admin before the call. */
  prepare?: (caller: Caller) => Promise<C>;
  request: (token: string, caller: Caller, ctx: C) => Promise<LightMyRequestResponse>;
  /** The stored state the call may change (writes only), read by the platform admin. */
  state?: (ctx: C) => Promise<unknown>;
}

const ids = async (res: Promise<LightMyRequestResponse>) =>
  ((await res).json().data as Array<{ id: string }>).map((item) => item.id).sort();

t.test('role × action matrix over HTTP', async (t) => {
  const app: App = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  const { team, owner, editor, viewer } = await staffedTeam(app, 't');
  const other = await signIn(app, 'u-owner');
  await createTeam(app, { name: 'Team U', slug: 'team-u', ownerUserId: 'u-owner' });
  await signIn(app, 'fan-1');
  const T = team.id;
  const TOKENS: Record<Caller, string> = { admin: ADMIN, owner, editor, viewer, other, fan: FAN };

  // T's resources and the platform's, made by the platform admin.
  const teamCollectible = await createCollectible(app, { teamId: T, name: 'T card' });
  const teamPack = await createPack(app, { teamId: T, name: 'T pack' });
  const globalCollectible = await createCollectible(app, { name: 'Global card' });
  const globalPack = await createPack(app, { name: 'Global draft' });
  await signIn(app, 'target');
  await addMember(app, T, 'target', 'editor');

  const packsOf = (query: Record<string, string>) =>
    ids(call(app, 'GET', '/api/admin/packs', ADMIN, { query: { limit: '200', ...query } }));
  const collectiblesOf = (query: Record<string, string>) =>
    ids(call(app, 'GET', '/api/admin/collectibles', ADMIN, { query: { limit: '200', ...query } }));
  const collectible = async (id: string) =>
    (await call(app, 'GET', `/api/admin/collectibles/${id}`, ADMIN)).json().data;

  const TEAM_READ = row(200, 200, 200, 200, 404, 403);
  const TEAM_CATALOG_WRITE = row(200, 200, 200, 403, 404, 403);
  const TEAM_CATALOG_CREATE = row(201, 201, 201, 403, 404, 403);
  const PLATFORM_CREATE = row(201, 403, 403, 403, 403, 403);
  const PLATFORM_BY_ID = row(200, 404, 404, 404, 404, 403);
  const PLATFORM_LIST = row(200, 403, 403, 403, 403, 403);

  // biome-ignore lint/suspicious/noExplicitAny: each cell has its own fixture type
  const cells: Array<Cell<any>> = [
    // Members of T.
    {
      name: 'GET members of T',
      expect: TEAM_READ,
      notFound: 'team_not_found',
      request: (token) => call(app, 'GET', membersUrl(T), token),
    },
    {
      name: 'POST member to T',
      expect: row(201, 201, 403, 403, 404, 403),
      notFound: 'team_not_found',
      prepare: async (caller) => {
        await signIn(app, `add-${caller}`);
        return `add-${caller}`;
      },
      request: (token, _caller, userId: string) =>
        call(app, 'POST', membersUrl(T), token, { payload: { userId, role: 'viewer' } }),
      state: () => rolesOf(app, T),
    },
    {
      name: 'PATCH member of T',
      expect: row(200, 200, 403, 403, 404, 403),
      notFound: 'team_not_found',
      prepare: async () => ((await rolesOf(app, T)).target === 'editor' ? 'viewer' : 'editor'),
      request: (token, _caller, role: string) =>
        call(app, 'PATCH', membersUrl(T, 'target'), token, { payload: { role } }),
      state: () => rolesOf(app, T),
    },
    {
      name: 'DELETE member of T',
      expect: row(200, 200, 403, 403, 404, 403),
      notFound: 'team_not_found',
      prepare: async (caller) => {
        await signIn(app, `del-${caller}`);
        await addMember(app, T, `del-${caller}`, 'viewer');
        return `del-${caller}`;
      },
      request: (token, _caller, userId: string) => call(app, 'DELETE', membersUrl(T, userId), token),
      state: () => rolesOf(app, T),
    },
    // Packs of T.
    {
      name: 'POST pack in T',
      expect: TEAM_CATALOG_CREATE,
      notFound: 'team_not_found',
      request: (token, caller) =>
        call(app, 'POST', '/api/admin/packs', token, { payload: { name: `Pack by ${caller}`, teamId: T } }),
      state: () => packsOf({ teamId: T }),
    },
    {
      name: 'PATCH pack of T',
      expect: TEAM_CATALOG_WRITE,
      notFound: 'pack_not_found',
      request: (token, caller) =>
        call(app, 'PATCH', `/api/admin/packs/${teamPack.id}`, token, { payload: { name: `Renamed by ${caller}` } }),
      state: () => getAdminPack(app, teamPack.id),
    },
    {
      name: 'POST addCollectible (T’s collectible) to T’s pack',
      expect: TEAM_CATALOG_WRITE,
      notFound: 'pack_not_found',
      prepare: (caller) => createCollectible(app, { teamId: T, name: `For ${caller}` }).then((c) => c.id),
      request: (token, _caller, collectibleId: string) =>
        call(app, 'POST', `/api/admin/packs/${teamPack.id}`, token, {
          payload: { action: 'addCollectible', collectibleId, quantity: 3 },
        }),
      state: () => getAdminPack(app, teamPack.id),
    },
    {
      name: 'POST addCollectible (a global collectible) to T’s pack',
      expect: TEAM_CATALOG_WRITE,
      notFound: 'pack_not_found',
      prepare: (caller) => createCollectible(app, { name: `Global for ${caller}` }).then((c) => c.id),
      request: (token, _caller, collectibleId: string) =>
        call(app, 'POST', `/api/admin/packs/${teamPack.id}`, token, {
          payload: { action: 'addCollectible', collectibleId },
        }),
      state: () => getAdminPack(app, teamPack.id),
    },
    {
      name: 'POST publish T’s pack',
      expect: TEAM_CATALOG_WRITE,
      notFound: 'pack_not_found',
      prepare: async (caller) =>
        (
          await packInStatus(app, 'draft', {
            pack: { teamId: T, name: `Publish ${caller}`, cardsPerPack: 1 },
            pool: [{ quantity: 2 }],
          })
        ).pack.id,
      request: (token, _caller, packId: string) =>
        call(app, 'POST', `/api/admin/packs/${packId}`, token, { payload: { action: 'publish' } }),
      state: (packId: string) => getAdminPack(app, packId),
    },
    {
      name: 'GET admin pack of T',
      expect: TEAM_READ,
      notFound: 'pack_not_found',
      request: (token) => call(app, 'GET', `/api/admin/packs/${teamPack.id}`, token),
    },
    {
      name: 'GET admin packs ?teamId=T',
      expect: TEAM_READ,
      notFound: 'team_not_found',
      request: (token) => call(app, 'GET', '/api/admin/packs', token, { query: { teamId: T } }),
    },
    // Collectibles of T.
    {
      name: 'POST collectible in T',
      expect: TEAM_CATALOG_CREATE,
      notFound: 'team_not_found',
      request: (token, caller) =>
        call(app, 'POST', '/api/admin/collectibles', token, { payload: { name: `Card by ${caller}`, teamId: T } }),
      state: () => collectiblesOf({ teamId: T }),
    },
    {
      name: 'GET collectible of T',
      expect: TEAM_READ,
      notFound: 'collectible_not_found',
      request: (token) => call(app, 'GET', `/api/admin/collectibles/${teamCollectible.id}`, token),
    },
    {
      name: 'PATCH collectible of T',
      expect: TEAM_CATALOG_WRITE,
      notFound: 'collectible_not_found',
      request: (token, caller) =>
        call(app, 'PATCH', `/api/admin/collectibles/${teamCollectible.id}`, token, {
          payload: { name: `Card renamed by ${caller}` },
        }),
      state: () => collectible(teamCollectible.id),
    },
    {
      name: 'GET admin collectibles ?teamId=T',
      expect: TEAM_READ,
      notFound: 'team_not_found',
      request: (token) => call(app, 'GET', '/api/admin/collectibles', token, { query: { teamId: T } }),
    },
    {
      name: 'GET audit log ?teamId=T',
      expect: TEAM_READ,
      notFound: 'team_not_found',
      request: (token) => call(app, 'GET', '/api/admin/audit-log', token, { query: { teamId: T } }),
    },
    // Platform resources (teamId null): the platform admins' alone.
    {
      name: 'POST global pack',
      expect: PLATFORM_CREATE,
      request: (token, caller) =>
        call(app, 'POST', '/api/admin/packs', token, { payload: { name: `Global by ${caller}` } }),
      state: () => packsOf({}),
    },
    {
      name: 'POST pack with teamId null',
      expect: PLATFORM_CREATE,
      request: (token, caller) =>
        call(app, 'POST', '/api/admin/packs', token, { payload: { name: `Null by ${caller}`, teamId: null } }),
      state: () => packsOf({}),
    },
    {
      name: 'GET global draft pack',
      expect: PLATFORM_BY_ID,
      notFound: 'pack_not_found',
      request: (token) => call(app, 'GET', `/api/admin/packs/${globalPack.id}`, token),
    },
    {
      name: 'PATCH global pack',
      expect: PLATFORM_BY_ID,
      notFound: 'pack_not_found',
      request: (token, caller) =>
        call(app, 'PATCH', `/api/admin/packs/${globalPack.id}`, token, {
          payload: { name: `Global renamed by ${caller}` },
        }),
      state: () => getAdminPack(app, globalPack.id),
    },
    {
      name: 'POST addCollectible to the global pack',
      expect: PLATFORM_BY_ID,
      notFound: 'pack_not_found',
      prepare: (caller) => createCollectible(app, { name: `Global pool ${caller}` }).then((c) => c.id),
      request: (token, _caller, collectibleId: string) =>
        call(app, 'POST', `/api/admin/packs/${globalPack.id}`, token, {
          payload: { action: 'addCollectible', collectibleId },
        }),
      state: () => getAdminPack(app, globalPack.id),
    },
    {
      name: 'POST global collectible',
      expect: PLATFORM_CREATE,
      request: (token, caller) =>
        call(app, 'POST', '/api/admin/collectibles', token, { payload: { name: `Global card by ${caller}` } }),
      state: () => collectiblesOf({}),
    },
    {
      name: 'GET global collectible',
      expect: PLATFORM_BY_ID,
      notFound: 'collectible_not_found',
      request: (token) => call(app, 'GET', `/api/admin/collectibles/${globalCollectible.id}`, token),
    },
    {
      name: 'PATCH global collectible',
      expect: PLATFORM_BY_ID,
      notFound: 'collectible_not_found',
      request: (token, caller) =>
        call(app, 'PATCH', `/api/admin/collectibles/${globalCollectible.id}`, token, {
          payload: { points: CALLERS.indexOf(caller) + 10 },
        }),
      state: () => collectible(globalCollectible.id),
    },
    {
      name: 'GET admin packs without teamId',
      expect: PLATFORM_LIST,
      request: (token) => call(app, 'GET', '/api/admin/packs', token),
    },
    {
      name: 'GET admin collectibles without teamId',
      expect: PLATFORM_LIST,
      request: (token) => call(app, 'GET', '/api/admin/collectibles', token),
    },
    {
      name: 'GET audit log without teamId',
      expect: PLATFORM_LIST,
      request: (token) => call(app, 'GET', '/api/admin/audit-log', token),
    },
    {
      name: 'POST team',
      expect: PLATFORM_CREATE,
      request: (token, caller) =>
        call(app, 'POST', '/api/admin/teams', token, { payload: { name: `Team by ${caller}` } }),
      state: () => ids(call(app, 'GET', '/api/teams', null, { query: { limit: '200' } })),
    },
  ];

  let checked = 0;
  for (const cell of cells) {
    await t.test(cell.name, async (t) => {
      for (const caller of CALLERS) {
        const want = cell.expect[caller];
        const ctx = cell.prepare ? await cell.prepare(caller) : undefined;
        const before = cell.state ? await cell.state(ctx) : undefined;
        const res = await cell.request(TOKENS[caller], caller, ctx);
        checked++;
        t.equal(
          res.statusCode,
          want,
          `${caller}: ${want}${res.statusCode !== want ? ` (got ${res.statusCode}: ${res.body})` : ''}`,
        );
        if (want === 403) t.equal(codeOf(res), 'forbidden', `${caller}: forbidden`);
        if (want === 404) t.equal(codeOf(res), cell.notFound, `${caller}: ${cell.notFound}`);
        if (want < 300) t.equal(res.json().success, true);
        if (cell.state) {
          const after = await cell.state(ctx);
          if (want < 300) t.notSame(after, before, `${caller}: the change is stored`);
          else t.same(after, before, `${caller}: nothing changed`);
        }
      }
    });
  }

  await t.test('list answers hold only the scope asked for', async (t) => {
    for (const caller of ['owner', 'editor', 'viewer'] as const) {
      const packs = await call(app, 'GET', '/api/admin/packs', TOKENS[caller], { query: { teamId: T, limit: '200' } });
      t.ok(packs.json().data.length > 0);
      t.ok(
        packs.json().data.every((pack: { teamId: string | null }) => pack.teamId === T),
        `${caller}: only T’s packs`,
      );
      const collectibles = await call(app, 'GET', '/api/admin/collectibles', TOKENS[caller], {
        query: { teamId: T, limit: '200' },
      });
      t.ok(
        collectibles.json().data.every((item: { teamId: string | null }) => item.teamId === T),
        `${caller}: only T’s collectibles`,
      );
      const audit = await call(app, 'GET', '/api/admin/audit-log', TOKENS[caller], {
        query: { teamId: T, limit: '200' },
      });
      t.ok(
        audit.json().data.every((entry: { teamId: string | null }) => entry.teamId === T),
        `${caller}: only T’s audit entries`,
      );
    }
  });

  t.equal(checked, cells.length * CALLERS.length, `${checked} cells checked`);
});
