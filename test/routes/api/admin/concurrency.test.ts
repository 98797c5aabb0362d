import t from 'tap';
import { buildTestApp } from '../../../support/app.js';
import {
  type AdminPackView,
  allAuditEntries,
  applyAction,
  createCollectible,
  getAdminPack,
  packAction,
  packInStatus,
} from '../../../support/catalog.js';

/**
 * Concurrent admin actions on one pack (both databases): the pack's row lock serializes them, so
 * every outcome is one a sequential order of the same requests could give.
 */

t.test('20 concurrent publishes of one draft: exactly one wins, one audit row', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'draft', { pack: { cardsPerPack: 5 }, pool: [{ quantity: 10 }] });

  const responses = await Promise.all(
    Array.from({ length: 20 }, () => packAction(app, pack.id, { action: 'publish' })),
  );
  const statuses = responses.map((res) => res.statusCode);
  t.equal(statuses.filter((status) => status === 200).length, 1, 'one 200');
  t.equal(statuses.filter((status) => status === 409).length, 19, 'nineteen 409');
  for (const res of responses.filter((res) => res.statusCode === 409)) {
    t.equal(res.json().error.code, 'invalid_transition');
    t.match(res.json().error.message, /active/, 'names the status the winner left');
  }
  const winner = responses.find((res) => res.statusCode === 200);
  const stored = await getAdminPack(app, pack.id);
  t.equal(stored.status, 'active');
  t.same(stored, winner?.json().data.pack, 'the stored pack is the winner’s answer');
  const publishes = (await allAuditEntries(app, { targetId: pack.id })).filter(
    (entry) => entry.action === 'pack.publish',
  );
  t.equal(publishes.length, 1, 'one pack.publish audit row');
});

t.test('addCollectible racing publish: the pool of an active pack only holds adds that came first', async (t) => {
  const app = await buildTestApp(t);
  const outcomes = { addFirst: 0, publishFirst: 0 };
  for (let round = 0; round < 10; round++) {
    const { pack } = await packInStatus(app, 'draft', {
      pack: { name: `Race ${round}`, cardsPerPack: 2 },
      pool: [{ quantity: 3 }],
    });
    const racer = await createCollectible(app, { name: `Racer ${round}` });
    const add = () => packAction(app, pack.id, { action: 'addCollectible', collectibleId: racer.id, quantity: 4 });
    const publish = () => packAction(app, pack.id, { action: 'publish' });
    // Alternate which request is sent first.
    const [added, published] =
      round % 2 === 0
        ? await Promise.all([add(), publish()])
        : await Promise.all([publish(), add()]).then(([p, a]) => [a, p] as const);

    t.equal(published.statusCode, 200, `round ${round}: publish succeeds either way (the pool was already fillable)`);
    t.ok([200, 409].includes(added.statusCode), `round ${round}: add is 200 or 409 (got ${added.statusCode})`);
    const stored = await getAdminPack(app, pack.id);
    t.equal(stored.status, 'active');
    const inPool = stored.pool.some((entry) => entry.collectibleId === racer.id);
    const audit = await allAuditEntries(app, { targetId: pack.id });
    const publishEntry = audit.find((entry) => entry.action === 'pack.publish');
    const addEntries = audit.filter(
      (entry) =>
        entry.action === 'pack.addCollectible' &&
        (entry.after as { collectibleId: string } | null)?.collectibleId === racer.id,
    );

    if (added.statusCode === 409) {
      outcomes.publishFirst++;
      t.equal(added.json().error.code, 'invalid_transition', `round ${round}: the late add is an invalid transition`);
      t.notOk(inPool, `round ${round}: a refused add is not in the pool`);
      t.equal(addEntries.length, 0, `round ${round}: and not audited`);
    } else {
      outcomes.addFirst++;
      t.ok(inPool, `round ${round}: an accepted add is in the pool`);
      t.match(
        stored.pool.find((entry) => entry.collectibleId === racer.id),
        { remaining: 4, weight: 1 },
      );
      t.equal(addEntries.length, 1, `round ${round}: one audit row for the add`);
      t.ok(
        (addEntries[0]?.createdAt as string) <= (publishEntry?.createdAt as string),
        `round ${round}: the add is logged no later than the publish`,
      );
      t.equal((added.json().data.pack as AdminPackView).status, 'draft', `round ${round}: the add answered a draft`);
    }
    t.ok(
      audit.every(
        (entry) => entry.action !== 'pack.addCollectible' || entry.createdAt <= (publishEntry?.createdAt as string),
      ),
      `round ${round}: no pool change is logged after the publish (nothing slipped in)`,
    );
  }
  t.comment(`add applied first in ${outcomes.addFirst} rounds, publish first in ${outcomes.publishFirst}`);
});

t.test('removeCollectible racing publish: an active pack can always fill a pack', async (t) => {
  const app = await buildTestApp(t);
  for (let round = 0; round < 10; round++) {
    // Exactly one pack's worth of copies: removing either entry makes the pool unfillable.
    const { pack, collectibles } = await packInStatus(app, 'draft', {
      pack: { name: `Race ${round}`, cardsPerPack: 4 },
      pool: [{ quantity: 2 }, { quantity: 2 }],
    });
    const remove = () =>
      packAction(app, pack.id, { action: 'removeCollectible', collectibleId: (collectibles[0] as { id: string }).id });
    const publish = () => packAction(app, pack.id, { action: 'publish' });
    const [removed, published] =
      round % 2 === 0
        ? await Promise.all([remove(), publish()])
        : await Promise.all([publish(), remove()]).then(([p, r]) => [r, p] as const);

    const codes = [removed.statusCode, published.statusCode];
    t.ok(
      (codes[0] === 200 && codes[1] === 409) || (codes[0] === 409 && codes[1] === 200),
      `round ${round}: exactly one of remove and publish wins (got remove ${codes[0]}, publish ${codes[1]})`,
    );
    const stored = await getAdminPack(app, pack.id);
    if (published.statusCode === 200) {
      t.equal(removed.json().error.code, 'invalid_transition');
      t.equal(stored.status, 'active');
      t.equal(
        stored.pool.reduce((sum, entry) => sum + entry.remaining, 0),
        4,
        'the active pack keeps a full pool',
      );
    } else {
      t.equal(published.json().error.code, 'pool_cannot_fill_pack');
      t.equal(stored.status, 'draft');
      t.equal(stored.pool.length, 1);
    }
  }
});

t.test('concurrent adds of one collectible converge to one entry', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'draft', { pool: [] });
  const c = await createCollectible(app);
  const responses = await Promise.all(
    Array.from({ length: 10 }, () =>
      packAction(app, pack.id, { action: 'addCollectible', collectibleId: c.id, quantity: 5, weight: 2 }),
    ),
  );
  t.same(
    responses.map((res) => res.statusCode),
    Array.from({ length: 10 }, () => 200),
  );
  const stored = await getAdminPack(app, pack.id);
  t.same(
    stored.pool.map((entry) => [entry.collectibleId, entry.remaining, entry.weight]),
    [[c.id, 5, 2]],
  );
  await applyAction(app, pack.id, { action: 'publish' });
  t.equal((await getAdminPack(app, pack.id)).status, 'active');
});
