import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import t from 'tap';
import type { App } from '../../../../../app.js';
import { buildTestApp } from '../../../../support/app.js';
import { ADMIN, allAuditEntries, createCollectible, getAdminPack, packInStatus } from '../../../../support/catalog.js';
import { call, codeOf, membersOf, membersUrl, signIn, staffedTeam } from '../../../../support/teams.js';

/**
 * Object-level authorization (OWASP API1): a member of team A calls every admin endpoint on team
 * B's packs, collectibles, members and audit log, by id (the ids obtained by the platform admin).
 * Each attempt gets 403 or 404 and changes nothing: after each one the stored rows are re-read
 * by the platform admin (packs with status and pool, collectibles, members of both teams, the
 * audit log) and compared. Where the answer is 404, it is the same answer an unknown id gets, so
 * B's resources do not even show to exist.
 */

type Token = string;

interface Attempt {
  name: string;
  /** Only for this attacker (self-escalation inside A is legitimate for A's owner). */
  only?: 'editor';
  accept: number[];
  /** Accepted error codes (any when absent). */
  codes?: string[];
  request: (token: Token, self: string) => Promise<LightMyRequestResponse>;
  /** The same request on ids that exist nowhere: a 404 must look exactly like it. */
  unknownTwin?: (token: Token, self: string) => Promise<LightMyRequestResponse>;
}

t.test('a member of team A cannot read or change team B’s resources', async (t) => {
  const app: App = await buildTestApp(t);
  await signIn(app, 'root', { role: 'admin' });
  const a = await staffedTeam(app, 'a');
  const b = await staffedTeam(app, 'b');
  const A = a.team.id;
  const B = b.team.id;

  // B's catalog (made by the platform admin, who hands the ids to the test).
  const bDraft = await packInStatus(app, 'draft', {
    pack: { teamId: B, name: 'B draft', cardsPerPack: 2 },
    pool: [{ quantity: 10 }],
  });
  const bActive = await packInStatus(app, 'active', {
    pack: { teamId: B, name: 'B active', cardsPerPack: 1 },
    pool: [{ quantity: 5 }],
  });
  const bArchived = await packInStatus(app, 'archived', {
    pack: { teamId: B, name: 'B archived', cardsPerPack: 1 },
    pool: [{ quantity: 1 }],
  });
  const bLoose = await createCollectible(app, { teamId: B, name: 'B loose card', rarity: 'legendary', points: 100 });
  const bPooled = bDraft.collectibles[0]?.id as string;
  // A's own catalog, the attacker's legitimate ground.
  const aDraft = await packInStatus(app, 'draft', {
    pack: { teamId: A, name: 'A draft', cardsPerPack: 1 },
    pool: [{ quantity: 3 }],
  });
  const aCard = aDraft.collectibles[0]?.id as string;

  const bPackIds = [bDraft.pack.id, bActive.pack.id, bArchived.pack.id];
  const bCollectibleIds = [
    bLoose.id,
    ...bDraft.collectibles.map((c) => c.id),
    ...bActive.collectibles.map((c) => c.id),
  ];

  /** Everything an attempt might change, read by the platform admin. */
  async function snapshot() {
    const listIds = async (url: string, teamId: string) =>
      ((await call(app, 'GET', url, ADMIN, { query: { teamId, limit: '200' } })).json().data as Array<{ id: string }>)
        .map((x) => x.id)
        .sort();
    const audit = await allAuditEntries(app);
    return {
      bPacks: await Promise.all(bPackIds.map((id) => getAdminPack(app, id))),
      aPack: await getAdminPack(app, aDraft.pack.id),
      bCollectibles: await Promise.all(
        bCollectibleIds.map(async (id) => (await call(app, 'GET', `/api/admin/collectibles/${id}`, ADMIN)).json().data),
      ),
      bPackList: await listIds('/api/admin/packs', B),
      aPackList: await listIds('/api/admin/packs', A),
      bCollectibleList: await listIds('/api/admin/collectibles', B),
      aMembers: await membersOf(app, A),
      bMembers: await membersOf(app, B),
      teams: (
        (await call(app, 'GET', '/api/teams', null, { query: { limit: '200' } })).json().data as Array<{ id: string }>
      ).map((x) => x.id),
      auditCount: audit.length,
      auditNewest: audit[0]?.id,
    };
  }

  const ghost = () => randomUUID();
  const packUrl = (id: string) => `/api/admin/packs/${id}`;
  const collectibleUrl = (id: string) => `/api/admin/collectibles/${id}`;

  const attempts: Attempt[] = [
    // B's packs, by id.
    ...bPackIds.map(
      (id, i): Attempt => ({
        name: `GET B’s ${['draft', 'active', 'archived'][i]} pack`,
        accept: [404],
        codes: ['pack_not_found'],
        request: (token) => call(app, 'GET', packUrl(id), token),
        unknownTwin: (token) => call(app, 'GET', packUrl(ghost()), token),
      }),
    ),
    ...bPackIds.map(
      (id, i): Attempt => ({
        name: `PATCH B’s ${['draft', 'active', 'archived'][i]} pack`,
        accept: [403, 404],
        request: (token) =>
          call(app, 'PATCH', packUrl(id), token, { payload: { name: 'Pwned', description: 'pwned' } }),
        unknownTwin: (token) =>
          call(app, 'PATCH', packUrl(ghost()), token, { payload: { name: 'Pwned', description: 'pwned' } }),
      }),
    ),
    {
      name: 'PATCH the price of B’s draft',
      accept: [403, 404],
      request: (token) => call(app, 'PATCH', packUrl(bDraft.pack.id), token, { payload: { price: 0, supply: 1 } }),
    },
    {
      name: 'publish B’s draft',
      accept: [403, 404],
      request: (token) => call(app, 'POST', packUrl(bDraft.pack.id), token, { payload: { action: 'publish' } }),
      unknownTwin: (token) => call(app, 'POST', packUrl(ghost()), token, { payload: { action: 'publish' } }),
    },
    {
      name: 'archive B’s active pack',
      accept: [403, 404],
      request: (token) => call(app, 'POST', packUrl(bActive.pack.id), token, { payload: { action: 'archive' } }),
    },
    {
      name: 'restore B’s archived pack',
      accept: [403, 404],
      request: (token) => call(app, 'POST', packUrl(bArchived.pack.id), token, { payload: { action: 'restore' } }),
    },
    {
      name: 'addCollectible of B’s own card to B’s draft',
      accept: [403, 404],
      request: (token) =>
        call(app, 'POST', packUrl(bDraft.pack.id), token, {
          payload: { action: 'addCollectible', collectibleId: bLoose.id, quantity: 1000 },
        }),
    },
    {
      name: 'addCollectible changing the weight of B’s pool entry',
      accept: [403, 404],
      request: (token) =>
        call(app, 'POST', packUrl(bDraft.pack.id), token, {
          payload: { action: 'addCollectible', collectibleId: bPooled, weight: 1000 },
        }),
    },
    {
      name: 'addCollectible of A’s card into B’s draft',
      accept: [403, 404],
      request: (token) =>
        call(app, 'POST', packUrl(bDraft.pack.id), token, {
          payload: { action: 'addCollectible', collectibleId: aCard },
        }),
    },
    {
      name: 'removeCollectible from B’s draft',
      accept: [403, 404],
      request: (token) =>
        call(app, 'POST', packUrl(bDraft.pack.id), token, {
          payload: { action: 'removeCollectible', collectibleId: bPooled },
        }),
    },
    {
      name: 'addCollectible of B’s loose card into A’s own draft',
      // B's collectible answers like an unknown id: its existence does not leak.
      accept: [404],
      codes: ['collectible_not_found'],
      request: (token) =>
        call(app, 'POST', packUrl(aDraft.pack.id), token, {
          payload: { action: 'addCollectible', collectibleId: bLoose.id },
        }),
    },
    {
      name: 'addCollectible of B’s pooled card into A’s own draft',
      accept: [404],
      codes: ['collectible_not_found'],
      request: (token) =>
        call(app, 'POST', packUrl(aDraft.pack.id), token, {
          payload: { action: 'addCollectible', collectibleId: bPooled, quantity: 5 },
        }),
    },
    {
      name: 'list B’s packs',
      accept: [404],
      codes: ['team_not_found'],
      request: (token) => call(app, 'GET', '/api/admin/packs', token, { query: { teamId: B } }),
      unknownTwin: (token) => call(app, 'GET', '/api/admin/packs', token, { query: { teamId: ghost() } }),
    },
    {
      name: 'list every pack (no teamId)',
      accept: [403],
      request: (token) => call(app, 'GET', '/api/admin/packs', token, { query: { status: 'draft' } }),
    },
    {
      name: 'create a pack in B',
      accept: [403, 404],
      request: (token) => call(app, 'POST', '/api/admin/packs', token, { payload: { name: 'Planted', teamId: B } }),
      unknownTwin: (token) =>
        call(app, 'POST', '/api/admin/packs', token, { payload: { name: 'Planted', teamId: ghost() } }),
    },
    // B's collectibles.
    {
      name: 'GET B’s collectible',
      accept: [404],
      codes: ['collectible_not_found'],
      request: (token) => call(app, 'GET', collectibleUrl(bLoose.id), token),
      unknownTwin: (token) => call(app, 'GET', collectibleUrl(ghost()), token),
    },
    {
      name: 'PATCH B’s collectible',
      accept: [403, 404],
      request: (token) =>
        call(app, 'PATCH', collectibleUrl(bLoose.id), token, {
          payload: { points: 0, rarity: 'common', name: 'Pwned' },
        }),
      unknownTwin: (token) =>
        call(app, 'PATCH', collectibleUrl(ghost()), token, { payload: { points: 0, rarity: 'common', name: 'Pwned' } }),
    },
    {
      name: 'PATCH B’s pooled collectible',
      accept: [403, 404],
      request: (token) => call(app, 'PATCH', collectibleUrl(bPooled), token, { payload: { name: 'Pwned' } }),
    },
    {
      name: 'list B’s collectibles',
      accept: [404],
      codes: ['team_not_found'],
      request: (token) => call(app, 'GET', '/api/admin/collectibles', token, { query: { teamId: B } }),
      unknownTwin: (token) => call(app, 'GET', '/api/admin/collectibles', token, { query: { teamId: ghost() } }),
    },
    {
      name: 'list every collectible (no teamId)',
      accept: [403],
      request: (token) => call(app, 'GET', '/api/admin/collectibles', token),
    },
    {
      name: 'create a collectible in B',
      accept: [403, 404],
      request: (token) =>
        call(app, 'POST', '/api/admin/collectibles', token, { payload: { name: 'Planted', teamId: B } }),
      unknownTwin: (token) =>
        call(app, 'POST', '/api/admin/collectibles', token, { payload: { name: 'Planted', teamId: ghost() } }),
    },
    // B's members.
    {
      name: 'list B’s members',
      accept: [404],
      codes: ['team_not_found'],
      request: (token) => call(app, 'GET', membersUrl(B), token),
      unknownTwin: (token) => call(app, 'GET', membersUrl(ghost()), token),
    },
    {
      name: 'add themselves to B as owner',
      accept: [403, 404],
      request: (token, self) => call(app, 'POST', membersUrl(B), token, { payload: { userId: self, role: 'owner' } }),
      unknownTwin: (token, self) =>
        call(app, 'POST', membersUrl(ghost()), token, { payload: { userId: self, role: 'owner' } }),
    },
    {
      name: 'add an existing B member again (probing)',
      accept: [403, 404],
      request: (token) => call(app, 'POST', membersUrl(B), token, { payload: { userId: 'b-editor', role: 'editor' } }),
    },
    {
      name: 'demote B’s owner',
      accept: [403, 404],
      request: (token) => call(app, 'PATCH', membersUrl(B, 'b-owner'), token, { payload: { role: 'viewer' } }),
      unknownTwin: (token) =>
        call(app, 'PATCH', membersUrl(ghost(), 'b-owner'), token, { payload: { role: 'viewer' } }),
    },
    {
      name: 'promote B’s viewer',
      accept: [403, 404],
      request: (token) => call(app, 'PATCH', membersUrl(B, 'b-viewer'), token, { payload: { role: 'owner' } }),
    },
    {
      name: 'remove B’s editor',
      accept: [403, 404],
      request: (token) => call(app, 'DELETE', membersUrl(B, 'b-editor'), token),
      unknownTwin: (token) => call(app, 'DELETE', membersUrl(ghost(), 'b-editor'), token),
    },
    {
      name: 'remove B’s owner',
      accept: [403, 404],
      request: (token) => call(app, 'DELETE', membersUrl(B, 'b-owner'), token),
    },
    // B's audit log.
    {
      name: 'read B’s audit log',
      accept: [404],
      codes: ['team_not_found'],
      request: (token) => call(app, 'GET', '/api/admin/audit-log', token, { query: { teamId: B } }),
      unknownTwin: (token) => call(app, 'GET', '/api/admin/audit-log', token, { query: { teamId: ghost() } }),
    },
    {
      name: 'read the audit log of B’s pack by targetId',
      accept: [403, 404],
      request: (token) => call(app, 'GET', '/api/admin/audit-log', token, { query: { targetId: bDraft.pack.id } }),
    },
    {
      name: 'read B’s pack log through A’s teamId and B’s targetId',
      // Allowed for A's members, but it must not contain B's entries: checked below.
      accept: [200],
      request: (token) =>
        call(app, 'GET', '/api/admin/audit-log', token, { query: { teamId: A, targetId: bDraft.pack.id } }),
    },
    {
      name: 'read the whole audit log',
      accept: [403],
      request: (token) => call(app, 'GET', '/api/admin/audit-log', token),
    },
    // Escalation inside A (an editor cannot manage members) and to the platform.
    {
      name: 'PATCH themselves to owner in A',
      only: 'editor',
      accept: [403],
      codes: ['forbidden'],
      request: (token, self) => call(app, 'PATCH', membersUrl(A, self), token, { payload: { role: 'owner' } }),
    },
    {
      name: 'add themselves to A as owner',
      only: 'editor',
      accept: [403],
      codes: ['forbidden'],
      request: (token, self) => call(app, 'POST', membersUrl(A), token, { payload: { userId: self, role: 'owner' } }),
    },
    {
      name: 'remove A’s owner',
      only: 'editor',
      accept: [403],
      codes: ['forbidden'],
      request: (token) => call(app, 'DELETE', membersUrl(A, 'a-owner'), token),
    },
    {
      name: 'create a team of their own',
      accept: [403],
      codes: ['forbidden'],
      request: (token, self) =>
        call(app, 'POST', '/api/admin/teams', token, { payload: { name: 'Mine', ownerUserId: self } }),
    },
    {
      name: 'create a global pack',
      accept: [403],
      request: (token) => call(app, 'POST', '/api/admin/packs', token, { payload: { name: 'Global plant' } }),
    },
  ];

  const attackers: Array<{ label: string; token: Token; self: string; kind: 'editor' | 'owner' }> = [
    { label: 'editor of A', token: a.editor, self: 'a-editor', kind: 'editor' },
    { label: 'owner of A', token: a.owner, self: 'a-owner', kind: 'owner' },
  ];

  let state = await snapshot();
  t.equal(state.bMembers.length, 3, 'B has its owner, editor and viewer');

  for (const attacker of attackers) {
    await t.test(attacker.label, async (t) => {
      for (const attempt of attempts) {
        if (attempt.only && attempt.only !== attacker.kind) continue;
        const res = await attempt.request(attacker.token, attacker.self);
        const label = `${attempt.name}`;
        t.ok(
          attempt.accept.includes(res.statusCode),
          `${label}: ${attempt.accept.join(' or ')} (got ${res.statusCode}: ${res.body.slice(0, 200)})`,
        );
        if (res.statusCode >= 400) {
          t.equal(res.json().success, false, `${label}: an error envelope`);
          if (attempt.codes) t.ok(attempt.codes.includes(codeOf(res) as string), `${label}: code ${codeOf(res)}`);
        } else {
          const entries = res.json().data as Array<{ teamId: string | null }>;
          t.ok(
            entries.every((entry) => entry.teamId === A),
            `${label}: nothing of B in the answer`,
          );
          t.equal(entries.length, 0, `${label}: no entry (the target is B’s)`);
        }
        if (res.statusCode === 404 && attempt.unknownTwin) {
          const twin = await attempt.unknownTwin(attacker.token, attacker.self);
          t.equal(twin.statusCode, 404, `${label}: an unknown id is 404 too`);
          t.same(
            { code: codeOf(res), message: res.json().error.message },
            { code: codeOf(twin), message: twin.json().error.message },
            `${label}: indistinguishable from an unknown id`,
          );
        }
        if (res.statusCode === 409)
          t.comment(`${attacker.label}: ${label}: 409 ${codeOf(res)} (reveals that the id exists)`);
        const after = await snapshot();
        t.same(after, state, `${label}: nothing changed`);
        state = after;
      }
    });
  }

  await t.test('B’s data is intact and B still works', async (t) => {
    t.equal(state.bPacks[0]?.status, 'draft');
    t.equal(state.bPacks[1]?.status, 'active');
    t.equal(state.bPacks[2]?.status, 'archived');
    t.same(
      state.bMembers.map((m) => [m.userId, m.role]),
      [
        ['b-editor', 'editor'],
        ['b-owner', 'owner'],
        ['b-viewer', 'viewer'],
      ],
    );
    const legit = await call(app, 'PATCH', packUrl(bDraft.pack.id), b.editor, {
      payload: { name: 'B renamed by its editor' },
    });
    t.equal(legit.statusCode, 200, 'B’s own editor still edits B’s pack');
  });
});
