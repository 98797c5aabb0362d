import { sql } from 'drizzle-orm';
import t from 'tap';
import { buildTestApp, createTestDatabase, suiteServer } from '../../../support/app.js';
import { signIn, sqlRows } from '../../../support/economy.js';
import { activeQuest } from '../../../support/quests.js';
import { startServerProcess } from '../../../support/server-process.js';

/**
 * The quests consumer killed with SIGKILL in the middle of a backlog: the batch it was handling
 * rolls back with its cursor, and the next instance resumes from there. Every event is counted
 * exactly once, and the progress equals the events counted at every moment.
 */

const EVENTS = 3000;

t.test(`a consumer killed mid-backlog resumes without counting twice (${suiteServer})`, async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const app = await buildTestApp(t, { DATABASE_URL: database.url });
  const fan = await signIn(app, 'crash-fan');
  const quest = await activeQuest(app, { criteria: { kind: 'count', event: 'purchase.completed', count: 100_000 } });
  await app.db.orm.execute(sql`
    insert into events (type, user_id, subject, data)
    select 'purchase.completed', ${fan.id}, 'p' || n, jsonb_build_object('purchaseId', 'p' || n, 'packId', 'x', 'price', 1)
    from generate_series(1, ${EVENTS}) as n`);

  const counted = async () => {
    const [row] = await sqlRows<{ counted: number; progress: number | null }>(
      app,
      sql`select (select count(*)::int from quest_events_counted where quest_id = ${quest.id}) as counted,
                 (select progress from quest_progress where quest_id = ${quest.id} and user_id = ${fan.id}) as progress`,
    );
    return { counted: row?.counted ?? 0, progress: row?.progress ?? 0 };
  };

  const env = { DATABASE_URL: database.url, EVENT_CONSUMERS: 'true', CRON_INTERNAL: 'false' };
  const victim = startServerProcess(env);
  t.teardown(() => victim.stop());
  await victim.listening;
  const deadline = Date.now() + 30_000;
  while ((await counted()).counted === 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 5));
  victim.child.kill('SIGKILL');
  await victim.exited;
  const atKill = await counted();
  t.ok(atKill.counted > 0, `the consumer had started (${atKill.counted} counted)`);
  t.equal(atKill.progress, atKill.counted, 'progress is exactly what was counted: a batch lands whole or not at all');

  const successor = startServerProcess(env);
  t.teardown(() => successor.stop());
  await successor.listening;
  const finish = Date.now() + 60_000;
  while ((await counted()).counted < EVENTS && Date.now() < finish)
    await new Promise((resolve) => setTimeout(resolve, 50));
  await successor.stop();
  t.same(await counted(), { counted: EVENTS, progress: EVENTS }, 'every event counted once');
});
