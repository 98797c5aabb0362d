import t from 'tap';
import { buildTestApp } from '../../../support/app.js';
import { allAuditEntries, applyAction, packInStatus } from '../../../support/catalog.js';

/** An action that changes nothing leaves no trace: no audit row, no new updatedAt. */

t.test('repeating an addCollectible with the same fields writes no audit row and keeps updatedAt', async (t) => {
  const app = await buildTestApp(t);
  const { pack, collectibles } = await packInStatus(app, 'draft', { pool: [{ quantity: 5, weight: 2 }] });
  const collectibleId = collectibles[0]?.id as string;
  const before = await allAuditEntries(app, { targetId: pack.id });

  const same = await applyAction(app, pack.id, { action: 'addCollectible', collectibleId, quantity: 5, weight: 2 });
  const bare = await applyAction(app, pack.id, { action: 'addCollectible', collectibleId });
  t.same(same, pack, 'the same pack back');
  t.same(bare, pack, 'no fields given: nothing to change');
  t.equal((await allAuditEntries(app, { targetId: pack.id })).length, before.length, 'no audit rows added');

  const changed = await applyAction(app, pack.id, { action: 'addCollectible', collectibleId, weight: 3 });
  t.equal(changed.pool[0]?.weight, 3);
  t.equal(changed.pool[0]?.remaining, 5);
  t.not(changed.updatedAt, pack.updatedAt);
  t.equal((await allAuditEntries(app, { targetId: pack.id })).length, before.length + 1, 'a real change is audited');
});
