import { randomUUID } from 'node:crypto';
import t from 'tap';
import { collectibles, packPoolEntries } from '../../../../db/schema.js';
import { MAX_POOL_ENTRIES } from '../../../../schemas/packs.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, allAuditEntries, createCollectible, createPack, packAction } from '../../../support/catalog.js';

/**
 * Pools and what the admin API answers about them stay bounded: an audit row of a pool change
 * holds the entry that changed (it once held the whole pool twice: 98 KB per change at 300
 * entries), a pool holds at most 1,000 collectibles, and admin lists show pool sizes, not pools.
 */

t.test('a full pool refuses a new collectible; audit rows and lists stay small however large the pool', async (t) => {
  const app = await buildTestApp(t);
  const pack = await createPack(app, { name: 'Big pool', cardsPerPack: 1 });
  // Filled straight in the database: a thousand API round trips would test nothing more.
  const now = new Date();
  const rows = Array.from({ length: MAX_POOL_ENTRIES }, (_, i) => ({
    id: randomUUID(),
    name: `Filler ${i}`,
    createdAt: now,
    updatedAt: now,
  }));
  await app.db.orm.insert(collectibles).values(rows);
  await app.db.orm
    .insert(packPoolEntries)
    .values(rows.map((row) => ({ packId: pack.id, collectibleId: row.id, remaining: 5, weight: 1 })));

  const newcomer = await createCollectible(app, { name: 'One too many' });
  const refused = await packAction(app, pack.id, { action: 'addCollectible', collectibleId: newcomer.id });
  t.equal(refused.statusCode, 409);
  t.equal(refused.json().error.code, 'pool_full');

  const existing = rows[0]?.id as string;
  const edited = await packAction(app, pack.id, { action: 'addCollectible', collectibleId: existing, quantity: 9 });
  t.equal(edited.statusCode, 200, 'an entry already in a full pool can still be edited');
  t.equal((await packAction(app, pack.id, { action: 'removeCollectible', collectibleId: existing })).statusCode, 200);
  const added = await packAction(app, pack.id, { action: 'addCollectible', collectibleId: newcomer.id });
  t.equal(added.statusCode, 200, 'after a removal there is room again');

  const audit = await allAuditEntries(app, { targetId: pack.id });
  t.same(
    audit.map((entry) => entry.action),
    ['pack.addCollectible', 'pack.removeCollectible', 'pack.addCollectible', 'pack.create'],
  );
  t.same(audit[0]?.after, { collectibleId: newcomer.id, weight: 1, remaining: 1 });
  t.same(audit[1]?.before, { collectibleId: existing, weight: 1, remaining: 9 });
  t.equal(audit[1]?.after, null);
  t.same(audit[2]?.before, { collectibleId: existing, weight: 1, remaining: 5 });
  for (const entry of audit)
    t.ok(JSON.stringify(entry).length < 2000, `${entry.action}: ${JSON.stringify(entry).length} bytes`);

  const list = await app.inject({ url: '/api/admin/packs', headers: bearer(ADMIN), query: { limit: '200' } });
  t.equal(list.statusCode, 200);
  t.equal(list.json().data[0].poolSize, MAX_POOL_ENTRIES);
  t.ok(list.body.length < 2000, `the list of a pack with ${MAX_POOL_ENTRIES} entries is ${list.body.length} bytes`);
  const one = await app.inject({ url: `/api/admin/packs/${pack.id}`, headers: bearer(ADMIN) });
  t.equal(one.json().data.pool.length, MAX_POOL_ENTRIES, 'GET one shows the whole pool');
});
