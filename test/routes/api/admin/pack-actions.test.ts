import t from 'tap';
import type { App } from '../../../../app.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import {
  ADMIN,
  ADMIN_PACK_KEYS,
  type AdminPackView,
  allAuditEntries,
  applyAction,
  assertValidation,
  createCollectible,
  createPack,
  FAN,
  getAdminPack,
  insertTeam,
  packAction,
  packInStatus,
  sortedKeys,
} from '../../../support/catalog.js';

/** [spec] POST /api/admin/packs/{id}: the state machine over HTTP. */

type Status = 'draft' | 'active' | 'archived';
type Action = 'publish' | 'archive' | 'restore' | 'addCollectible' | 'removeCollectible';
/** A subtest's `t`. */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const STATUSES: Status[] = ['draft', 'active', 'archived'];
const ACTIONS: Action[] = ['publish', 'archive', 'restore', 'addCollectible', 'removeCollectible'];
/** action → from → to. */
const TABLE: Record<Action, Partial<Record<Status, Status>>> = {
  publish: { draft: 'active' },
  archive: { draft: 'archived', active: 'archived' },
  restore: { archived: 'draft' },
  addCollectible: { draft: 'draft' },
  removeCollectible: { draft: 'draft' },
};

/** The pack and its audit trail as they stand, to compare after a rejected request. */
async function snapshot(app: App, packId: string) {
  return { pack: await getAdminPack(app, packId), audit: (await allAuditEntries(app, { targetId: packId })).length };
}

async function assertUnchanged(t: Test, app: App, before: Awaited<ReturnType<typeof snapshot>>, label: string) {
  const after = await snapshot(app, before.pack.id);
  t.same(after.pack, before.pack, `${label}: the pack (status, pool, timestamps) is unchanged`);
  t.equal(after.audit, before.audit, `${label}: no audit row`);
}

function assertActionSuccess(
  t: Test,
  res: Awaited<ReturnType<typeof packAction>>,
  status: Status,
  label: string,
): AdminPackView {
  t.equal(res.statusCode, 200, label);
  const body = res.json();
  t.same(Object.keys(body).sort(), ['data', 'success'], `${label}: envelope`);
  t.equal(body.success, true);
  t.same(Object.keys(body.data).sort(), ['pack', 'success'], `${label}: { success, pack }`);
  t.equal(body.data.success, true);
  t.same(sortedKeys(body.data.pack), ADMIN_PACK_KEYS, `${label}: the admin pack`);
  t.equal(body.data.pack.status, status, `${label}: status ${status}`);
  return body.data.pack;
}

/** The details of a 400 name exactly these fields. */
t.test('every cell of the 5 actions x 3 statuses table', async (t) => {
  const app = await buildTestApp(t);
  for (const status of STATUSES) {
    for (const action of ACTIONS) {
      const label = `${action} on ${status}`;
      const { pack, collectibles } = await packInStatus(app, status, {
        pack: { cardsPerPack: 2 },
        pool: [{ quantity: 3 }],
      });
      const spare = await createCollectible(app, { name: 'Spare' });
      const inPool = collectibles[0]?.id as string;
      const body =
        action === 'addCollectible'
          ? { action, collectibleId: spare.id }
          : action === 'removeCollectible'
            ? { action, collectibleId: inPool }
            : { action };
      const before = await snapshot(app, pack.id);
      const res = await packAction(app, pack.id, body);
      const to = TABLE[action][status];

      if (!to) {
        t.equal(res.statusCode, 409, `${label} is refused`);
        const error = res.json();
        t.equal(error.success, false);
        t.equal(error.error.code, 'invalid_transition', label);
        t.match(error.error.message, new RegExp(`\\b${status}\\b`), `${label}: the message names the current status`);
        t.match(error.error.message, new RegExp(`\\b${action}\\b`), `${label}: the message names the action`);
        await assertUnchanged(t, app, before, label);
        continue;
      }

      const changed = assertActionSuccess(t, res, to, label);
      const stored = await getAdminPack(app, pack.id);
      t.same(stored, changed, `${label}: the answer is what is stored`);
      t.ok(stored.updatedAt >= pack.updatedAt, `${label}: updatedAt moves forward`);
      switch (action) {
        case 'publish':
          t.type(stored.publishedAt, 'string', 'publish sets publishedAt');
          t.ok((stored.publishedAt as string) >= pack.updatedAt);
          t.equal(stored.archivedAt, null);
          break;
        case 'archive':
          t.type(stored.archivedAt, 'string', 'archive sets archivedAt');
          t.equal(stored.publishedAt, pack.publishedAt, 'archive keeps publishedAt');
          break;
        case 'restore':
          t.equal(stored.publishedAt, null, 'restore clears publishedAt');
          t.equal(stored.archivedAt, null, 'restore clears archivedAt');
          t.same(stored.pool, pack.pool, 'restore keeps the pool');
          break;
        case 'addCollectible':
          t.same(
            stored.pool.find((entry) => entry.collectibleId === spare.id),
            { collectibleId: spare.id, name: 'Spare', rarity: 'common', weight: 1, remaining: 1, probability: 0.25 },
            'a new entry defaults to quantity 1 and weight 1',
          );
          t.equal(stored.pool.length, 2);
          break;
        case 'removeCollectible':
          t.same(stored.pool, [], 'the entry is gone');
          break;
      }
      const audit = await allAuditEntries(app, { targetId: pack.id });
      t.equal(audit.length, before.audit + 1, `${label}: one audit row`);
      t.equal(audit[0]?.action, `pack.${action}`);
    }
  }
});

t.test('a restored pack can be published again', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'archived');
  const restored = await applyAction(app, pack.id, { action: 'restore' });
  t.equal(restored.status, 'draft');
  const republished = await applyAction(app, pack.id, { action: 'publish' });
  t.equal(republished.status, 'active');
  t.ok((republished.publishedAt as string) > (pack.publishedAt as string), 'a new publishedAt');
  const listed = await app.inject({ method: 'GET', url: '/api/packs' });
  t.same(
    listed.json().packs.map((p: { id: string }) => p.id),
    [pack.id],
  );
});

t.test('publish needs a pool that fills one pack', async (t) => {
  const app = await buildTestApp(t);
  const pack = await createPack(app, { cardsPerPack: 5 });

  let before = await snapshot(app, pack.id);
  const empty = await packAction(app, pack.id, { action: 'publish' });
  t.equal(empty.statusCode, 409, 'an empty pool');
  t.equal(empty.json().error.code, 'pool_cannot_fill_pack');
  await assertUnchanged(t, app, before, 'empty pool');

  const a = await createCollectible(app);
  const b = await createCollectible(app);
  await applyAction(app, pack.id, { action: 'addCollectible', collectibleId: a.id, quantity: 3, weight: 100 });
  await applyAction(app, pack.id, { action: 'addCollectible', collectibleId: b.id, quantity: 1 });
  before = await snapshot(app, pack.id);
  const short = await packAction(app, pack.id, { action: 'publish' });
  t.equal(short.statusCode, 409, '4 copies for a pack of 5 (weights do not count)');
  t.equal(short.json().error.code, 'pool_cannot_fill_pack');
  t.match(short.json().error.message, /4/);
  await assertUnchanged(t, app, before, 'short pool');

  await applyAction(app, pack.id, { action: 'addCollectible', collectibleId: b.id, quantity: 2 });
  const exact = await packAction(app, pack.id, { action: 'publish' });
  const published = assertActionSuccess(t, exact, 'active', 'exactly cardsPerPack copies');
  t.type(published.publishedAt, 'string');
  t.equal(published.available, 1);
});

t.test('addCollectible: defaults, partial replacement, idempotence', async (t) => {
  const app = await buildTestApp(t);
  const pack = await createPack(app);
  const c = await createCollectible(app, { name: 'Striker', rarity: 'epic' });

  const first = await applyAction(app, pack.id, {
    action: 'addCollectible',
    collectibleId: c.id,
    quantity: 5,
    weight: 2,
  });
  t.same(first.pool, [
    { collectibleId: c.id, name: 'Striker', rarity: 'epic', weight: 2, remaining: 5, probability: 1 },
  ]);

  const second = await applyAction(app, pack.id, { action: 'addCollectible', collectibleId: c.id, weight: 3 });
  t.same(
    second.pool,
    [{ collectibleId: c.id, name: 'Striker', rarity: 'epic', weight: 3, remaining: 5, probability: 1 }],
    'weight replaced, quantity kept',
  );

  const third = await applyAction(app, pack.id, { action: 'addCollectible', collectibleId: c.id, quantity: 7 });
  t.same(
    third.pool[0],
    { collectibleId: c.id, name: 'Striker', rarity: 'epic', weight: 3, remaining: 7, probability: 1 },
    'quantity replaced, weight kept',
  );

  const bare = await applyAction(app, pack.id, { action: 'addCollectible', collectibleId: c.id });
  t.same(bare.pool, third.pool, 'no fields: the existing entry is kept as it is (not reset to 1/1)');

  const body = { action: 'addCollectible', collectibleId: c.id, quantity: 9, weight: 0.25 };
  const once = await applyAction(app, pack.id, body);
  const twice = await applyAction(app, pack.id, body);
  t.same(twice.pool, once.pool, 'the same body twice: the same pool');
  t.same((await getAdminPack(app, pack.id)).pool, [
    { collectibleId: c.id, name: 'Striker', rarity: 'epic', weight: 0.25, remaining: 9, probability: 1 },
  ]);

  const limits = await applyAction(app, pack.id, {
    action: 'addCollectible',
    collectibleId: c.id,
    quantity: 1_000_000,
    weight: 1_000_000,
  });
  t.same([limits.pool[0]?.remaining, limits.pool[0]?.weight], [1_000_000, 1_000_000], 'the upper bounds are accepted');
  const small = await applyAction(app, pack.id, {
    action: 'addCollectible',
    collectibleId: c.id,
    quantity: 1,
    weight: 0.001,
  });
  t.same([small.pool[0]?.remaining, small.pool[0]?.weight], [1, 0.001]);
});

t.test('addCollectible checks the collectible and its team', async (t) => {
  const app = await buildTestApp(t);
  const teamA = await insertTeam(app, 'A');
  const teamB = await insertTeam(app, 'B');
  const teamPack = await createPack(app, { teamId: teamA });
  const globalPack = await createPack(app);
  const ofA = await createCollectible(app, { teamId: teamA, name: 'A card' });
  const ofB = await createCollectible(app, { teamId: teamB, name: 'B card' });
  const global = await createCollectible(app, { name: 'Global card' });

  let before = await snapshot(app, teamPack.id);
  const unknown = await packAction(app, teamPack.id, {
    action: 'addCollectible',
    collectibleId: 'no-such-collectible',
  });
  t.equal(unknown.statusCode, 404);
  t.equal(unknown.json().error.code, 'collectible_not_found');
  await assertUnchanged(t, app, before, 'unknown collectible');

  const wrongTeam = await packAction(app, teamPack.id, { action: 'addCollectible', collectibleId: ofB.id });
  t.equal(wrongTeam.statusCode, 409);
  t.equal(wrongTeam.json().error.code, 'collectible_wrong_team');
  await assertUnchanged(t, app, before, 'another team’s collectible');

  const own = await applyAction(app, teamPack.id, { action: 'addCollectible', collectibleId: ofA.id });
  t.same(
    own.pool.map((entry) => entry.collectibleId),
    [ofA.id],
    'the team’s own collectible',
  );
  const withGlobal = await applyAction(app, teamPack.id, { action: 'addCollectible', collectibleId: global.id });
  t.same(
    withGlobal.pool.map((entry) => entry.collectibleId).sort(),
    [ofA.id, global.id].sort(),
    'a global collectible on a team pack',
  );

  before = await snapshot(app, globalPack.id);
  const teamOnGlobal = await packAction(app, globalPack.id, { action: 'addCollectible', collectibleId: ofA.id });
  t.equal(teamOnGlobal.statusCode, 409, 'a team collectible on a global pack');
  t.equal(teamOnGlobal.json().error.code, 'collectible_wrong_team');
  await assertUnchanged(t, app, before, 'team collectible on a global pack');
  const globalOnGlobal = await applyAction(app, globalPack.id, { action: 'addCollectible', collectibleId: global.id });
  t.same(
    globalOnGlobal.pool.map((entry) => entry.collectibleId),
    [global.id],
  );
});

t.test('removeCollectible removes an entry; one not in the pool is 404 pool_entry_not_found', async (t) => {
  const app = await buildTestApp(t);
  const { pack, collectibles } = await packInStatus(app, 'draft', { pool: [{ quantity: 2 }, { quantity: 3 }] });
  const [first, second] = collectibles as unknown as [{ id: string }, { id: string }];
  const removed = await applyAction(app, pack.id, { action: 'removeCollectible', collectibleId: first.id });
  t.same(
    removed.pool.map((entry) => entry.collectibleId),
    [second.id],
  );
  t.equal(removed.pool[0]?.probability, 1);

  const before = await snapshot(app, pack.id);
  for (const collectibleId of [first.id, (await createCollectible(app)).id, 'no-such-collectible']) {
    const res = await packAction(app, pack.id, { action: 'removeCollectible', collectibleId });
    t.equal(res.statusCode, 404);
    t.equal(res.json().error.code, 'pool_entry_not_found');
    await assertUnchanged(t, app, before, `remove ${collectibleId}, not in the pool`);
  }

  // Removed entries can come back, with fresh defaults.
  const again = await applyAction(app, pack.id, { action: 'addCollectible', collectibleId: first.id });
  t.same(
    again.pool.find((entry) => entry.collectibleId === first.id),
    { collectibleId: first.id, name: 'Card', rarity: 'common', weight: 1, remaining: 1, probability: 0.25 },
  );
});

t.test('a body that breaks the rules is a 400 naming the field, and changes nothing', async (t) => {
  const app = await buildTestApp(t);
  const { pack, collectibles } = await packInStatus(app, 'draft', {
    pack: { cardsPerPack: 1 },
    pool: [{ quantity: 2 }],
  });
  const c = (collectibles[0] as { id: string }).id;
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['addCollectible without collectibleId', { action: 'addCollectible', quantity: 2 }, ['/collectibleId']],
    ['removeCollectible without collectibleId', { action: 'removeCollectible' }, ['/collectibleId']],
    ['publish with quantity', { action: 'publish', quantity: 5 }, ['/quantity']],
    ['publish with weight', { action: 'publish', weight: 2 }, ['/weight']],
    ['archive with quantity', { action: 'archive', quantity: 5 }, ['/quantity']],
    ['archive with weight', { action: 'archive', weight: 2 }, ['/weight']],
    ['restore with quantity', { action: 'restore', quantity: 5 }, ['/quantity']],
    ['restore with weight', { action: 'restore', weight: 2 }, ['/weight']],
    ['removeCollectible with quantity', { action: 'removeCollectible', collectibleId: c, quantity: 5 }, ['/quantity']],
    ['removeCollectible with weight', { action: 'removeCollectible', collectibleId: c, weight: 2 }, ['/weight']],
    ['publish with collectibleId', { action: 'publish', collectibleId: c }, ['/collectibleId']],
    ['archive with collectibleId', { action: 'archive', collectibleId: c }, ['/collectibleId']],
    ['restore with collectibleId', { action: 'restore', collectibleId: c }, ['/collectibleId']],
    ['quantity 0', { action: 'addCollectible', collectibleId: c, quantity: 0 }, ['/quantity']],
    ['quantity 1000001', { action: 'addCollectible', collectibleId: c, quantity: 1_000_001 }, ['/quantity']],
    ['quantity 1.5', { action: 'addCollectible', collectibleId: c, quantity: 1.5 }, ['/quantity']],
    ['quantity "5" (no coercion)', { action: 'addCollectible', collectibleId: c, quantity: '5' }, ['/quantity']],
    ['quantity null', { action: 'addCollectible', collectibleId: c, quantity: null }, ['/quantity']],
    ['weight 0', { action: 'addCollectible', collectibleId: c, weight: 0 }, ['/weight']],
    ['weight -1', { action: 'addCollectible', collectibleId: c, weight: -1 }, ['/weight']],
    ['weight 1000001', { action: 'addCollectible', collectibleId: c, weight: 1_000_001 }, ['/weight']],
    ['weight "1" (no coercion)', { action: 'addCollectible', collectibleId: c, weight: '1' }, ['/weight']],
    ['collectibleId ""', { action: 'addCollectible', collectibleId: '' }, ['/collectibleId']],
    [
      'collectibleId of 129 characters',
      { action: 'addCollectible', collectibleId: 'c'.repeat(129) },
      ['/collectibleId'],
    ],
    ['collectibleId a number', { action: 'addCollectible', collectibleId: 5 }, ['/collectibleId']],
    ['unknown action', { action: 'delete' }, ['/action']],
    ['action in another case', { action: 'Publish' }, ['/action']],
    ['no action', {}, ['/action']],
    ['unknown extra field', { action: 'publish', force: true }, ['/force']],
  ];
  const before = await snapshot(app, pack.id);
  for (const [label, body, paths] of cases) {
    assertValidation(t, await packAction(app, pack.id, body), paths, label, { exactly: true });
    await assertUnchanged(t, app, before, label);
  }

  for (const [label, payload] of [
    ['a JSON array', '[]'],
    ['a JSON string', '"publish"'],
    ['invalid JSON', '{"action":'],
  ] as const) {
    const res = await app.inject({
      method: 'POST',
      url: `/api/admin/packs/${pack.id}`,
      headers: { ...bearer(ADMIN), 'content-type': 'application/json' },
      payload,
    });
    t.equal(res.statusCode, 400, label);
    t.equal(res.json().success, false, label);
    await assertUnchanged(t, app, before, label);
  }
});

t.test('unknown pack, non-admin and anonymous callers', async (t) => {
  const app = await buildTestApp(t);
  const { pack, collectibles } = await packInStatus(app, 'draft', { pool: [{ quantity: 10 }] });
  const spare = await createCollectible(app);
  const c = (collectibles[0] as { id: string }).id;
  const bodies = [
    { action: 'publish' },
    { action: 'archive' },
    { action: 'restore' },
    { action: 'addCollectible', collectibleId: spare.id, quantity: 3 },
    { action: 'removeCollectible', collectibleId: c },
  ];

  for (const body of bodies) {
    const res = await packAction(app, 'no-such-pack', body);
    t.equal(res.statusCode, 404, `${body.action} on an unknown pack`);
    t.equal(res.json().error.code, 'pack_not_found');
  }

  const before = await snapshot(app, pack.id);
  for (const body of bodies) {
    const forbidden = await packAction(app, pack.id, body, FAN);
    t.equal(forbidden.statusCode, 403, `${body.action} by a fan`);
    t.equal(forbidden.json().success, false);
    t.equal(forbidden.json().error.code, 'forbidden');

    const anonymous = await packAction(app, pack.id, body, null);
    t.equal(anonymous.statusCode, 401, `${body.action} without a token`);
    t.equal(anonymous.json().success, false);
    t.match(anonymous.headers['www-authenticate'], /^Bearer/);
    await assertUnchanged(t, app, before, `${body.action} by a fan or anonymous`);
  }
  const onUnknownByFan = await packAction(app, 'no-such-pack', { action: 'publish' }, FAN);
  // responses never reveal whether a resource exists beyond what the public API shows.
  // An existing draft answers a fan 403; an unknown id must answer the same, not 404.
  t.equal(onUnknownByFan.statusCode, 403, 'a fan learns nothing about which packs exist');
  await assertUnchanged(t, app, before, 'after 403 and 401');
});
