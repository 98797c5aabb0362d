import { sql } from 'drizzle-orm';
import t from 'tap';
import { buildTestApp } from '../../../support/app.js';
import { packInStatus } from '../../../support/catalog.js';
import { assertNoViolations, sqlRows } from '../../../support/economy.js';
import { adminGrantRequest, createReward } from '../../../support/rewards.js';

/** The largest admin grant: 1000 users in one request, and its repeat creating nothing. */

t.test('an admin grant to 1000 users, then again', async (t) => {
  const app = await buildTestApp(t);
  const userIds = Array.from({ length: 1000 }, (_, i) => `batch-fan-${String(i).padStart(4, '0')}`);
  await app.db.orm.execute(
    sql`insert into users (id, display_name) select u, u from unnest(${sql.param(userIds)}::text[]) as u`,
  );
  const { pack } = await packInStatus(app, 'active', { pack: { cardsPerPack: 1 }, pool: [{ quantity: 1000 }] });
  const reward = await createReward(app, { coins: 10, packs: [{ packId: pack.id, count: 1 }] });
  const started = performance.now();
  const res = await adminGrantRequest(app, reward.id, { userIds, key: 'launch' });
  t.equal(res.statusCode, 200, res.body.slice(0, 500));
  t.comment(`1000 grants in ${Math.round(performance.now() - started)} ms`);
  t.equal(res.json().data.length, 1000);
  const again = await adminGrantRequest(app, reward.id, { userIds, key: 'launch' });
  t.ok(
    again.json().data.every((outcome: { created: boolean }) => !outcome.created),
    'a repeat creates nothing',
  );
  const [counts] = await sqlRows<{ grants: number; entries: number }>(
    app,
    sql`select (select count(*) from grants)::int as grants, (select count(*) from wallet_ledger where kind = 'reward')::int as entries`,
  );
  t.same(counts, { grants: 1000, entries: 1000 });
  await assertNoViolations(t, app);
});

t.test('concurrent admin grants of one key: each user granted once, created in exactly one answer', async (t) => {
  const app = await buildTestApp(t);
  const userIds = Array.from({ length: 20 }, (_, i) => `race-fan-${i}`);
  await app.db.orm.execute(
    sql`insert into users (id, display_name) select u, u from unnest(${sql.param(userIds)}::text[]) as u`,
  );
  const reward = await createReward(app, { coins: 7 });
  const answers = await Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      adminGrantRequest(app, reward.id, { userIds: i % 2 ? [...userIds].reverse() : userIds, key: 'race' }),
    ),
  );
  t.same(
    answers.map((res) => res.statusCode),
    [200, 200, 200, 200, 200],
  );
  const created = answers.flatMap((res) =>
    res
      .json()
      .data.filter((outcome: { created: boolean }) => outcome.created)
      .map((outcome: { grant: { userId: string } }) => outcome.grant.userId),
  );
  t.same([...created].sort(), [...userIds].sort(), 'each user created once');
  const [counts] = await sqlRows<{ grants: number; entries: number }>(
    app,
    sql`select (select count(*) from grants)::int as grants, (select count(*) from wallet_ledger where kind = 'reward')::int as entries`,
  );
  t.same(counts, { grants: 20, entries: 20 });
  await assertNoViolations(t, app);
});
