import { sql } from 'drizzle-orm';
import t from 'tap';
import type { Database } from '../../../../plugins/app/database/index.js';
import type { DomainEvent } from '../../../../schemas/events.js';
import { bearer, buildTestApp } from '../../../support/app.js';
import { ADMIN, insertTeam, packInStatus } from '../../../support/catalog.js';
import { buyPack, expectStatus, fund, openPack, signIn, sqlRows } from '../../../support/economy.js';

/**
 * The domain event log: each change appends its event in its own transaction, and a consumer
 * reads every event once, in commit order, even when an earlier id commits after a later one.
 */

interface EventView {
  id: string;
  type: string;
  user_id: string | null;
  team_id: string | null;
  subject: string;
  data: Record<string, unknown>;
}
const eventsOf = (app: Awaited<ReturnType<typeof buildTestApp>>) =>
  sqlRows<EventView>(app, sql`select id::text, type, user_id, team_id, subject, data from events order by id`);

/** A promise and the functions that settle it, to hold a transaction open from outside. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

t.test('buying, opening, coins, publishing and members each append their event in their transaction', async (t) => {
  const app = await buildTestApp(t);
  const teamId = await insertTeam(app);
  const { pack } = await packInStatus(app, 'active', {
    pack: { teamId, price: 30, cardsPerPack: 2 },
    pool: [{ quantity: 10 }],
  });
  const fan = await signIn(app, 'fan-events');
  await fund(app, fan, 100);
  const { purchaseId, userPackId } = await buyPack(app, fan, pack.id);
  const opened = await openPack(app, fan, pack.id, { userPackId });
  expectStatus(opened, 200, 'open');
  const added = await app.inject({
    method: 'POST',
    url: `/api/admin/teams/${teamId}/members`,
    headers: bearer(ADMIN),
    payload: { userId: fan.id, role: 'viewer' },
  });
  expectStatus(added, 201, 'add member');

  const events = await eventsOf(app);
  const types = events.map((event) => event.type);
  t.same(types, [
    'pack.published',
    'wallet.credited',
    'wallet.debited',
    'purchase.completed',
    'pack.opened',
    'member.added',
  ]);
  const byType = new Map(events.map((event) => [event.type, event]));
  t.match(byType.get('pack.published'), { team_id: teamId, subject: pack.id, data: { packId: pack.id, price: 30 } });
  t.match(byType.get('wallet.credited'), {
    user_id: fan.id,
    data: { amount: 100, balanceAfter: 100, kind: 'adjustment' },
  });
  t.match(byType.get('wallet.debited'), {
    user_id: fan.id,
    data: { amount: 30, balanceAfter: 70, kind: 'purchase', reference: purchaseId },
  });
  t.match(byType.get('purchase.completed'), {
    user_id: fan.id,
    team_id: teamId,
    subject: purchaseId,
    data: { price: 30 },
  });
  const openEvent = byType.get('pack.opened') as EventView;
  t.match(openEvent, { user_id: fan.id, team_id: teamId, subject: userPackId });
  const pulls = (openEvent.data as { pulls: { pullId: string; serialNumber: number }[] }).pulls;
  t.same(
    pulls.map((pull) => pull.pullId),
    opened.json().data.items.map((item: { id: string }) => item.id),
    'the event names the pulls the open answered',
  );
  t.match(byType.get('member.added'), { user_id: fan.id, team_id: teamId, data: { role: 'viewer' } });

  // A refused change appends nothing: a debit past the balance.
  const before = events.length;
  const refused = await app.inject({
    method: 'POST',
    url: `/api/admin/wallets/${fan.id}/adjustments`,
    headers: bearer(ADMIN),
    payload: { amount: -1000, reason: 'too much' },
  });
  expectStatus(refused, 409, 'overdraft');
  t.equal((await eventsOf(app)).length, before);
});

t.test('an event with data that does not match its type is refused before anything is written', async (t) => {
  const app = await buildTestApp(t);
  await t.rejects(
    app.db.transaction((tx) =>
      app.events.append(tx, {
        type: 'quest.completed',
        subject: 'q',
        data: { questId: 'q' } as unknown as { questId: string; period: string },
      }),
    ),
    /invalid data/,
  );
  t.equal((await eventsOf(app)).length, 0);
});

t.test('a consumer reads in commit order: an event whose transaction commits late is read, once', async (t) => {
  const app = await buildTestApp(t);
  const seen: string[] = [];
  const consumer = app.events.consumer({
    name: 'test-late-commit',
    handle: async (_tx, events) => {
      seen.push(...events.map((event) => event.subject));
    },
  });
  const append = (tx: Database, subject: string) =>
    app.events.append(tx, { type: 'quest.completed', subject, data: { questId: subject, period: 'once' } });

  // Transaction A takes the lower id and stays open; B takes a higher id and commits first.
  const appendedA = deferred();
  const commitA = deferred();
  const transactionA = app.db.transaction(async (tx) => {
    await append(tx, 'early-id-late-commit');
    appendedA.resolve();
    await commitA.promise;
  });
  await appendedA.promise;
  await app.db.transaction((tx) => append(tx, 'late-id-early-commit'));
  const [ids] = await sqlRows<{ ids: string[] }>(app, sql`select array_agg(id::text order by id) as ids from events`);
  t.equal(ids?.ids.length, 1, 'only B is visible while A is open');

  // While A is open, B is not read either: reading it now would move the cursor past A's event.
  t.equal(await consumer.drain(), 0, 'nothing is read while an older transaction may still append');
  commitA.resolve();
  await transactionA;
  t.equal(await consumer.catchUp(), 2);
  t.same(seen, ['early-id-late-commit', 'late-id-early-commit'], 'A first: it began first');
  t.equal(await consumer.drain(), 0, 'each event once');
  t.equal(await consumer.backlog(), 0);
});

t.test('a consumer that fails mid-batch resumes from its cursor without handling an event twice', async (t) => {
  const app = await buildTestApp(t);
  await app.db.orm.execute(sql`create table consumer_test_seen (event_id bigint primary key)`);
  let failOnce = true;
  const consumer = app.events.consumer({
    name: 'test-crash',
    batchSize: 10,
    handle: async (tx, events: readonly DomainEvent[]) => {
      for (const [index, event] of events.entries()) {
        // The primary key would refuse an event handled twice.
        await tx.execute(sql`insert into consumer_test_seen (event_id) values (${Number(event.id)})`);
        if (failOnce && index === 4) {
          failOnce = false;
          throw new Error('the process died here');
        }
      }
    },
  });
  await app.db.transaction(async (tx) => {
    for (let n = 0; n < 25; n++)
      await app.events.append(tx, {
        type: 'quest.completed',
        subject: `s${n}`,
        data: { questId: 'q', period: 'once' },
      });
  });
  await t.rejects(consumer.catchUp(), /the process died here/);
  const [afterCrash] = await sqlRows<{ n: number }>(app, sql`select count(*)::int as n from consumer_test_seen`);
  t.equal(afterCrash?.n, 0, 'the failed batch left nothing behind');
  t.equal(await consumer.catchUp(), 25);
  const [after] = await sqlRows<{ n: number }>(app, sql`select count(*)::int as n from consumer_test_seen`);
  t.equal(after?.n, 25);
});

t.test('one instance at a time consumes: a second run while one holds the cursor skips', async (t) => {
  const app = await buildTestApp(t);
  const inside = deferred();
  const release = deferred();
  const consumer = app.events.consumer({
    name: 'test-one-at-a-time',
    handle: async () => {
      inside.resolve();
      await release.promise;
    },
  });
  await app.db.transaction((tx) =>
    app.events.append(tx, { type: 'quest.completed', subject: 'x', data: { questId: 'q', period: 'once' } }),
  );
  // The event is readable once every older transaction on the server has ended: try until the run holds it.
  let first: Promise<number | undefined>;
  for (;;) {
    first = consumer.runOnce();
    if ((await Promise.race([inside.promise.then(() => 'inside'), first])) === 'inside') break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.equal(await consumer.runOnce(), undefined, 'another run is under way: this one does nothing');
  release.resolve();
  t.equal(await first, 1);
  t.equal(await consumer.catchUp(), 0);
});
