import { sql } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import { buildTestApp } from '../../../support/app.js';
import { errorCode, expectStatus, signIn, sqlRows } from '../../../support/economy.js';
import { activeQuest, claim, drainQuests, progressRows } from '../../../support/quests.js';

/**
 * Daily periods roll over at local midnight in the quest's frozen time zone, once per day, on the
 * 25-hour and the 23-hour days of daylight saving too. Events are written to the log with the
 * instants to test, next year's (a quest counts what happens from its publication; the consumer
 * reads the log, whoever wrote it).
 */

async function purchaseAt(app: App, userId: string, at: string): Promise<void> {
  const subject = `purchase-${at}`;
  await app.db.orm.execute(sql`
    insert into events (type, occurred_at, user_id, subject, data)
    values ('purchase.completed', ${at}::timestamptz, ${userId}, ${subject},
            ${JSON.stringify({ purchaseId: subject, packId: 'p', price: 1 })}::jsonb)`);
}

const dailyQuest = (app: App, timeZone: string) =>
  activeQuest(app, {
    criteria: { kind: 'count', event: 'purchase.completed', count: 1 },
    period: 'daily',
    timeZone,
  });

const cases = [
  {
    zone: 'Pacific/Auckland',
    day: '2027-04-04',
    hours: 25,
    // Local midnight is 11:00Z (NZDT, +13) at the start of the day and 12:00Z (NZST, +12) at its end.
    instants: {
      before: '2027-04-03T10:59:00Z',
      first: '2027-04-03T11:01:00Z',
      last: '2027-04-04T11:59:00Z',
      after: '2027-04-04T12:01:00Z',
    },
    periods: ['2027-04-03', '2027-04-04', '2027-04-05'],
  },
  {
    zone: 'Pacific/Auckland',
    day: '2027-09-26',
    hours: 23,
    instants: {
      before: '2027-09-25T11:59:00Z',
      first: '2027-09-25T12:01:00Z',
      last: '2027-09-26T10:59:00Z',
      after: '2027-09-26T11:01:00Z',
    },
    periods: ['2027-09-25', '2027-09-26', '2027-09-27'],
  },
  {
    zone: 'America/Los_Angeles',
    day: '2027-11-07',
    hours: 25,
    // Local midnight is 07:00Z (PDT, -7) at the start and 08:00Z (PST, -8) at the end.
    instants: {
      before: '2027-11-07T06:59:00Z',
      first: '2027-11-07T07:01:00Z',
      last: '2027-11-08T07:59:00Z',
      after: '2027-11-08T08:01:00Z',
    },
    periods: ['2027-11-06', '2027-11-07', '2027-11-08'],
  },
  {
    zone: 'America/Los_Angeles',
    day: '2027-03-14',
    hours: 23,
    instants: {
      before: '2027-03-14T07:59:00Z',
      first: '2027-03-14T08:01:00Z',
      last: '2027-03-15T06:59:00Z',
      after: '2027-03-15T07:01:00Z',
    },
    periods: ['2027-03-13', '2027-03-14', '2027-03-15'],
  },
];

for (const { zone, day, hours, instants, periods } of cases) {
  t.test(`${zone}: the ${hours}-hour day ${day} is one period, rolling over at local midnight`, async (t) => {
    const app = await buildTestApp(t);
    const fan = await signIn(app, `fan-${zone}`);
    const quest = await dailyQuest(app, zone);
    for (const at of Object.values(instants)) await purchaseAt(app, fan.id, at);
    await drainQuests(app);
    const rows = await progressRows(app, quest.id, fan.id);
    t.same(
      rows.map((row) => row.period),
      periods,
      'the minute before local midnight and the minute after are different days; the first and last minute of the long or short day are one',
    );
    t.ok(
      rows.every((row) => row.completed_at !== null),
      'each day completed once',
    );
    const [completions] = await sqlRows<{ n: number }>(
      app,
      sql`select count(*)::int as n from events where type = 'quest.completed' and user_id = ${fan.id}`,
    );
    t.equal(completions?.n, 3, 'three days, three completions: never twice a day');
    const first = await claim(app, fan.token, quest.id, { period: day });
    expectStatus(first, 201, 'claim the day');
    expectStatus(await claim(app, fan.token, quest.id, { period: day }), 200, 'that day again');
    const next = await claim(app, fan.token, quest.id, { period: periods[2] as string });
    expectStatus(next, 201, 'the next day is another period');
    t.not(next.json().data.grantId, first.json().data.grantId);
    const missing = await claim(app, fan.token, quest.id, { period: '2027-06-15' });
    t.equal(errorCode(missing), 'quest_not_completed', 'a day without an event gives nothing');
  });
}

t.test('one instant is a different day in Auckland and in Los Angeles', async (t) => {
  const app = await buildTestApp(t);
  const fan = await signIn(app, 'fan-two-zones');
  const auckland = await dailyQuest(app, 'Pacific/Auckland');
  const losAngeles = await dailyQuest(app, 'America/Los_Angeles');
  await purchaseAt(app, fan.id, '2027-01-10T20:00:00Z');
  await drainQuests(app);
  t.same(
    (await progressRows(app, auckland.id, fan.id)).map((row) => row.period),
    ['2027-01-11'],
  );
  t.same(
    (await progressRows(app, losAngeles.id, fan.id)).map((row) => row.period),
    ['2027-01-10'],
  );
});
