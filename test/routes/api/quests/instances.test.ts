import { sql } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { buildTestApp, createTestDatabase, suiteServer } from '../../../support/app.js';
import { packInStatus } from '../../../support/catalog.js';
import { assertNoViolations, balance, buyPack, signIn, sqlRows } from '../../../support/economy.js';
import { activeQuest, claim } from '../../../support/quests.js';

/**
 * Two instances on one database, both running the quests consumer in the background, woken by
 * NOTIFY: each event counts once, and claims racing through both instances grant once.
 */

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

t.test(`two instances on ${suiteServer}: progress counted once, claims granted once`, async (t) => {
  const database = await createTestDatabase();
  // Teardowns run last-registered first: the database is dropped after both apps closed.
  t.teardown(() => database.drop());
  const env = { DATABASE_URL: database.url, EVENT_CONSUMERS: 'true', CRON_INTERNAL: 'false' };
  const apps: App[] = [await buildTestApp(t, env), await buildTestApp(t, env)];
  const [first, second] = apps as [App, App];
  const quest = await activeQuest(
    first,
    { criteria: { kind: 'count', event: 'purchase.completed', count: 2 } },
    { coins: 3 },
  );
  const { pack } = await packInStatus(first, 'active', {
    pack: { price: 0, cardsPerPack: 1 },
    pool: [{ quantity: 100 }],
  });

  const fans = await Promise.all(
    Array.from({ length: 10 }, (_, i) => signIn(apps[i % 2] as App, `two-instance-fan-${i}`)),
  );
  // Each fan buys twice, once through each instance, all at once.
  await Promise.all(fans.flatMap((fan) => [buyPack(first, fan, pack.id), buyPack(second, fan, pack.id)]));

  await waitFor('every fan to complete the quest in the background', async () => {
    const [row] = await sqlRows<{ n: number }>(
      first,
      sql`select count(*)::int as n from quest_progress where quest_id = ${quest.id} and completed_at is not null`,
    );
    return row?.n === fans.length;
  });
  const [counted] = await sqlRows<{ n: number }>(
    first,
    sql`select count(*)::int as n from quest_events_counted where quest_id = ${quest.id}`,
  );
  t.equal(counted?.n, 20, 'each purchase counted once');
  const [progress] = await sqlRows<{ max: number; min: number }>(
    first,
    sql`select max(progress)::int as max, min(progress)::int as min from quest_progress where quest_id = ${quest.id}`,
  );
  t.same(progress, { max: 2, min: 2 });

  const claims = await Promise.all(
    fans.flatMap((fan) => Array.from({ length: 6 }, (_, i) => claim(apps[i % 2] as App, fan.token, quest.id))),
  );
  t.equal(claims.filter((res) => res.statusCode === 201).length, fans.length, 'one grant per fan');
  t.equal(claims.filter((res) => res.statusCode === 200).length, fans.length * 5, 'the rest answer it');
  for (const fan of fans) t.equal(await balance(first, fan), 3, `${fan.id} credited once`);
  const [completed] = await sqlRows<{ n: number }>(
    first,
    sql`select count(*)::int as n from events where type = 'quest.completed' and subject = ${quest.id}`,
  );
  t.equal(completed?.n, fans.length, 'quest.completed once per fan');
  await assertNoViolations(t, first);
});
