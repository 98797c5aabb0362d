import t from 'tap';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, createPack, PUBLIC_PACK_KEYS, packInStatus, sortedKeys } from '../../../support/catalog.js';

/** GET /api/packs/{id}: an active pack with its live odds. */

const PUBLIC_COLLECTIBLE_KEYS = ['description', 'id', 'imageUrl', 'name', 'points', 'rarity', 'teamId'];

interface Odds {
  collectible: Record<string, unknown> & { id: string };
  weight: number;
  remaining: number;
  probability: number;
}

t.test('an active pack answers its public view and the odds of every pool entry', async (t) => {
  const app = await buildTestApp(t);
  const { pack, collectibles } = await packInStatus(app, 'active', {
    pack: { name: 'Odds', description: 'Live odds', price: 25, cardsPerPack: 3, supply: 7 },
    pool: [
      { quantity: 10, weight: 1, collectible: { name: 'Common one', rarity: 'common', points: 1 } },
      { quantity: 4, weight: 2.5, collectible: { name: 'Rare one', rarity: 'rare', points: 50, description: 'Shiny' } },
      {
        quantity: 1,
        weight: 0.5,
        collectible: { name: 'Legend', rarity: 'legendary', points: 500, imageUrl: 'https://img.example/l.png' },
      },
    ],
  });

  const res = await app.inject({ method: 'GET', url: `/api/packs/${pack.id}` });
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.same(Object.keys(body).sort(), ['data', 'success']);
  t.equal(body.success, true);
  t.same(Object.keys(body.data).sort(), ['odds', 'pack']);
  t.same(sortedKeys(body.data.pack), PUBLIC_PACK_KEYS);
  t.same(body.data.pack, {
    id: pack.id,
    teamId: null,
    name: 'Odds',
    description: 'Live odds',
    imageUrl: null,
    price: 25,
    cardsPerPack: 3,
    available: 5, // floor(15 / 3) = 5, under the supply of 7
    publishedAt: pack.publishedAt,
  });

  const odds = body.data.odds as Odds[];
  const byId = [...collectibles].sort((a, b) => (a.id < b.id ? -1 : 1));
  t.same(
    odds.map((entry) => entry.collectible.id),
    byId.map((collectible) => collectible.id),
    'ordered by collectible id',
  );
  const specs = new Map(
    collectibles.map((collectible, i) => [
      collectible.id,
      [
        { q: 10, w: 1 },
        { q: 4, w: 2.5 },
        { q: 1, w: 0.5 },
      ][i] as { q: number; w: number },
    ]),
  );
  const total = 10 * 1 + 4 * 2.5 + 1 * 0.5;
  for (const entry of odds) {
    const spec = specs.get(entry.collectible.id) as { q: number; w: number };
    const collectible = collectibles.find((c) => c.id === entry.collectible.id);
    t.same(sortedKeys(entry), ['collectible', 'probability', 'remaining', 'weight']);
    t.same(sortedKeys(entry.collectible), PUBLIC_COLLECTIBLE_KEYS, 'the public collectible: no minted, no timestamps');
    t.same(entry.collectible, {
      id: collectible?.id,
      teamId: null,
      name: collectible?.name,
      description: collectible?.description,
      imageUrl: collectible?.imageUrl,
      rarity: collectible?.rarity,
      points: collectible?.points,
    });
    t.equal(entry.weight, spec.w);
    t.equal(entry.remaining, spec.q);
    t.ok(Math.abs(entry.probability - (spec.w * spec.q) / total) < 1e-12, `probability of ${collectible?.name}`);
  }
  const sum = odds.reduce((acc, entry) => acc + entry.probability, 0);
  t.ok(Math.abs(sum - 1) < 1e-9, `probabilities sum to 1 (${sum})`);

  // The admin view reports the same odds.
  const admin = await app.inject({ method: 'GET', url: `/api/admin/packs/${pack.id}`, headers: bearer(ADMIN) });
  for (const entry of admin.json().data.pool as { collectibleId: string; probability: number }[]) {
    const publicEntry = odds.find((o) => o.collectible.id === entry.collectibleId);
    t.equal(entry.probability, publicEntry?.probability);
  }
});

t.test('equal weights give each entry its share of the copies', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', {
    pack: { cardsPerPack: 1 },
    pool: [{ quantity: 1 }, { quantity: 3 }],
  });
  const res = await app.inject({ method: 'GET', url: `/api/packs/${pack.id}` });
  const probabilities = (res.json().data.odds as Odds[]).map((entry) => [entry.remaining, entry.probability]);
  t.same(
    probabilities.sort((a, b) => (a[0] as number) - (b[0] as number)),
    [
      [1, 0.25],
      [3, 0.75],
    ],
  );
});

t.test('drafts, archived packs and unknown ids are 404 pack_not_found', async (t) => {
  const app = await buildTestApp(t);
  const draft = await packInStatus(app, 'draft');
  const archived = await packInStatus(app, 'archived');
  const empty = await createPack(app);
  for (const [label, id] of [
    ['draft', draft.pack.id],
    ['archived', archived.pack.id],
    ['empty draft', empty.id],
    ['unknown', 'no-such-pack'],
    ['128 characters', 'p'.repeat(128)],
  ] as const) {
    const res = await app.inject({ method: 'GET', url: `/api/packs/${id}` });
    t.equal(res.statusCode, 404, label);
    t.same(Object.keys(res.json()).sort(), ['error', 'success']);
    t.equal(res.json().success, false);
    t.equal(res.json().error.code, 'pack_not_found', label);
  }
});

t.test('an id of 129 characters is 400', async (t) => {
  const app = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: `/api/packs/${'p'.repeat(129)}` });
  t.equal(res.statusCode, 400);
  t.equal(res.json().success, false);
  t.equal(res.json().error.code, 'validation_failed');
  t.ok(res.json().error.details.some((detail: { path: string }) => detail.path === '/params/id'));
});
