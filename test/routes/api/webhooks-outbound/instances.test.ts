import t from 'tap';
import type { App } from '../../../../app.js';
import { buildTestApp, createTestDatabase, suiteServer } from '../../../support/app.js';
import { adjust, expectStatus } from '../../../support/economy.js';
import { signIn } from '../../../support/teams.js';
import { LOOPBACK_ENV, platformWebhooksUrl, registerEndpoint, startReceiver } from '../../../support/webhooks.js';

/** Two instances on one database: every delivery is sent by one of them, once. */

async function twoInstances(t: { teardown(fn: () => unknown): void }, env: Record<string, string>) {
  const database = await createTestDatabase();
  // Teardowns run last-registered first: the database is dropped after both apps closed.
  t.teardown(() => database.drop());
  const shared = { ...LOOPBACK_ENV, DATABASE_URL: database.url, CRON_INTERNAL: 'false', ...env };
  return [await buildTestApp(t, shared), await buildTestApp(t, shared)] as [App, App];
}

async function credits(apps: [App, App], count: number): Promise<void> {
  await Promise.all(apps.map((app, index) => signIn(app, `wh-two-${index}`)));
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const app = apps[i % 2] as App;
      expectStatus(await adjust(app, `wh-two-${i % 2}`, { amount: 1, reason: `credit ${i}` }), 201, 'credit');
    }),
  );
}

t.test(`senders of two instances racing on ${suiteServer}: each delivery sent once`, async (t) => {
  const apps = await twoInstances(t, {});
  const [first, second] = apps;
  const receiver = await startReceiver(t);
  await registerEndpoint(first, platformWebhooksUrl(), { url: receiver.url, events: ['wallet.credited'] });
  await credits(apps, 40);
  await Promise.all([first.webhooks.consumer.catchUp(), second.webhooks.consumer.catchUp()]);
  const [a, b] = await Promise.all([first.webhooks.sender.runDue(), second.webhooks.sender.runDue()]);
  t.equal(a + b, 40, `40 attempts between them (${a} and ${b})`);
  t.equal(receiver.received.length, 40, 'the receiver got 40 requests');
  t.equal(receiver.unique().length, 40, 'none of them twice');
});

t.test(`in the background on two instances on ${suiteServer}: every event arrives once`, async (t) => {
  const apps = await twoInstances(t, { EVENT_CONSUMERS: 'true' });
  const receiver = await startReceiver(t);
  await registerEndpoint(apps[0], platformWebhooksUrl(), { url: receiver.url, events: ['wallet.credited'] });
  await credits(apps, 30);
  await receiver.waitFor(30, 20_000);
  // Anything sent twice would arrive within the poll interval.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(receiver.received.length, 30);
  t.equal(receiver.unique().length, 30);
});
