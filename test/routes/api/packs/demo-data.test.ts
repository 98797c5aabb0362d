import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { App } from '../../../../app.js';
import { bearer, buildTestApp, createTestDatabase } from '../../../support/app.js';
import { ADMIN } from '../../../support/catalog.js';
import { PROJECT_ROOT } from '../../../support/paths.js';

/** DEMO_DATA=true loads a small catalog into an empty database, once. */

const pluginsDir = join(PROJECT_ROOT, 'plugins', 'app');
const demoCodeExists = readdirSync(pluginsDir, { recursive: true }).some((name) =>
  /(^|[\\/])demo([\\/][^\\/]+|[^\\/]*)\.ts$/.test(String(name)),
);
const RARITIES = ['common', 'uncommon', 'rare', 'epic', 'legendary'];

async function catalogCounts(app: App) {
  const get = async (url: string, query: Record<string, string>) =>
    (await app.inject({ method: 'GET', url, headers: bearer(ADMIN), query: { limit: '200', ...query } })).json()
      .data as {
      id: string;
      rarity?: string;
      teamId?: string | null;
    }[];
  return {
    active: await get('/api/admin/packs', { status: 'active' }),
    draft: await get('/api/admin/packs', { status: 'draft' }),
    all: await get('/api/admin/packs', {}),
    collectibles: await get('/api/admin/collectibles', {}),
  };
}

/** One database that two app starts share. */
async function sharedDatabase(t: { teardown(fn: () => unknown): void }): Promise<Record<string, string>> {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  return { DATABASE_URL: database.url };
}

t.test(
  'DEMO_DATA loads four active packs (two platform, one per team), one draft, two teams and collectibles of every rarity, once',
  async (t) => {
    const env = { ...(await sharedDatabase(t)), DEMO_DATA: 'true' };
    let first: Awaited<ReturnType<typeof catalogCounts>> | undefined;

    await t.test('first start', async (t) => {
      const app = await buildTestApp(t, env);
      const listed = await app.inject({ method: 'GET', url: '/api/packs' });
      t.equal(listed.statusCode, 200);
      t.ok(demoCodeExists, 'the demo loader exists');
      t.equal(listed.json().packs.length, 4, 'four active packs are public');
      first = await catalogCounts(app);
      t.equal(first.active.length, 4, 'four active packs');
      t.equal(first.draft.length, 1, 'one draft');
      t.equal(first.all.length, 5, 'and nothing else');
      const teams = (await app.inject({ url: '/api/teams' })).json().data as { id: string; slug: string }[];
      t.same(teams.map((team) => team.slug).sort(), ['harbour-city-fc', 'northside-athletic']);
      t.same(
        first.active
          .filter((pack) => pack.teamId)
          .map((pack) => pack.teamId)
          .sort(),
        teams.map((team) => team.id).sort(),
        'one active pack per team',
      );
      t.same(
        [...new Set(first.collectibles.map((c) => c.rarity))].sort(),
        [...RARITIES].sort(),
        'collectibles of every rarity',
      );
      for (const pack of listed.json().packs as { id: string; available: number }[]) {
        t.ok(pack.available > 0, 'an active demo pack can be sold');
        const detail = await app.inject({ method: 'GET', url: `/api/packs/${pack.id}` });
        t.equal(detail.statusCode, 200);
        const odds = detail.json().data.odds as { probability: number }[];
        t.ok(odds.length > 0);
        t.ok(Math.abs(odds.reduce((sum, entry) => sum + entry.probability, 0) - 1) < 1e-9, 'its odds sum to 1');
      }
      const draft = first.draft[0] as { id: string };
      t.equal(
        (await app.inject({ method: 'GET', url: `/api/packs/${draft.id}` })).statusCode,
        404,
        'the draft is not public',
      );
    });

    if (!first) return;
    const loaded = first;
    await t.test('a second start on the same database adds nothing', async (t) => {
      const app = await buildTestApp(t, env);
      const again = await catalogCounts(app);
      t.same(again.all.map((pack) => pack.id).sort(), loaded.all.map((pack) => pack.id).sort(), 'the same packs');
      t.same(
        again.collectibles.map((c) => c.id).sort(),
        loaded.collectibles.map((c) => c.id).sort(),
        'the same collectibles',
      );
    });

    await t.test('two instances starting together on an empty database load it once', async (t) => {
      const database = await createTestDatabase();
      t.teardown(() => database.drop());
      await t.test('start both', async (t) => {
        const [a] = await Promise.all([
          buildTestApp(t, { DATABASE_URL: database.url, DEMO_DATA: 'true' }),
          buildTestApp(t, { DATABASE_URL: database.url, DEMO_DATA: 'true' }),
        ]);
        const counts = await catalogCounts(a);
        t.equal(counts.all.length, 5);
        t.equal(counts.collectibles.length, loaded.collectibles.length);
        t.equal((await a.inject({ url: '/api/teams' })).json().data.length, 2, 'the teams once too');
      });
    });
  },
);

t.test('without DEMO_DATA the catalog starts empty', async (t) => {
  const app = await buildTestApp(t);
  t.same((await app.inject({ method: 'GET', url: '/api/packs' })).json(), { packs: [], nextCursor: null });
  const counts = await catalogCounts(app);
  t.same([counts.all.length, counts.collectibles.length], [0, 0]);
});
