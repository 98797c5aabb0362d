import t from 'tap';
import { buildTestApp } from '../../../support/app.js';
import { MAX_ATTEMPTS } from '../../../../plugins/app/webhooks/rules.js';
import { ADMIN } from '../../../support/catalog.js';
import { adjust, expectStatus } from '../../../support/economy.js';
import { call, codeOf, signIn } from '../../../support/teams.js';
import {
  deliverNow,
  type DeliveryView,
  deliveriesOf,
  LOOPBACK_ENV,
  platformWebhooksUrl,
  registerEndpoint,
  startReceiver,
} from '../../../support/webhooks.js';

/** Endpoints that fail, time out or are gone; the test ping; replays. */

const DAY = 24 * 3600_000;

async function credit(app: Awaited<ReturnType<typeof buildTestApp>>, user: string) {
  expectStatus(await adjust(app, user, { amount: 1, reason: 'webhook test' }), 201, 'credit');
}

t.test('410 Gone disables the endpoint at once, and the owner sees why', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const receiver = await startReceiver(t, () => ({ status: 410 }));
  const { endpoint } = await registerEndpoint(app, platformWebhooksUrl(), {
    url: receiver.url,
    events: ['wallet.credited'],
  });
  const url = platformWebhooksUrl(`/${endpoint.id}`);
  await signIn(app, 'wh-gone');
  await credit(app, 'wh-gone');
  await credit(app, 'wh-gone');
  await app.webhooks.consumer.catchUp();
  // One endpoint's deliveries are sent a few at a time: both may go before the 410 is seen.
  await app.webhooks.sender.runDue();
  const read = (await call(app, 'GET', url, ADMIN)).json().data;
  t.match(read, { enabled: false, disabledReason: 'gone' });
  t.match(read.disabledDetail, /410 Gone/);
  const deliveries = await deliveriesOf(app, url);
  t.same(
    deliveries.map((d) => d.status),
    ['failed', 'failed'],
    'its deliveries are given up',
  );
  await credit(app, 'wh-gone');
  await deliverNow(app);
  t.equal((await deliveriesOf(app, url)).length, 2, 'a disabled endpoint gets no new deliveries');
  t.equal(codeOf(await call(app, 'POST', `${url}/deliveries/${deliveries[0]?.id}/replay`, ADMIN)), 'webhook_disabled');
});

t.test(
  'an endpoint failing for 5 days is disabled; enabling it and replaying the failed ones delivers them',
  async (t) => {
    const app = await buildTestApp(t, LOOPBACK_ENV);
    let healthy = false;
    const receiver = await startReceiver(t, () => ({ status: healthy ? 200 : 503 }));
    const { endpoint } = await registerEndpoint(app, platformWebhooksUrl(), {
      url: receiver.url,
      events: ['wallet.credited'],
    });
    const url = platformWebhooksUrl(`/${endpoint.id}`);
    await signIn(app, 'wh-failing');
    await credit(app, 'wh-failing');
    await app.webhooks.consumer.catchUp();
    const start = Date.now();
    t.equal(await app.webhooks.sender.runDue({ at: new Date(start) }), 1);
    let read = (await call(app, 'GET', url, ADMIN)).json().data;
    t.equal(Date.parse(read.failingSince), start, 'failing since the first failure');
    t.equal(read.enabled, true);

    t.equal(await app.webhooks.sender.runDue({ at: new Date(start + DAY) }), 1, 'a retry a day later');
    t.equal((await call(app, 'GET', url, ADMIN)).json().data.enabled, true, 'one day of failures is not enough');
    t.equal(await app.webhooks.sender.runDue({ at: new Date(start + 5 * DAY + 1000) }), 1, 'five days later');
    read = (await call(app, 'GET', url, ADMIN)).json().data;
    t.match(read, { enabled: false, disabledReason: 'failing' });
    t.match(read.disabledDetail, /Every attempt failed since/);
    t.match(read.disabledDetail, /503/);
    const [failed] = await deliveriesOf(app, url);
    t.equal(failed?.status, 'failed');

    healthy = true;
    const since = new Date(start - 60_000).toISOString();
    t.equal(codeOf(await call(app, 'POST', `${url}/replay-failed`, ADMIN, { payload: { since } })), 'webhook_disabled');
    expectStatus(await call(app, 'PATCH', url, ADMIN, { payload: { enabled: true } }), 200, 'enable');
    read = (await call(app, 'GET', url, ADMIN)).json().data;
    t.match(read, { enabled: true, disabledReason: null, failingSince: null });
    const replayed = await call(app, 'POST', `${url}/replay-failed`, ADMIN, { payload: { since } });
    t.same(replayed.json().data, { replayed: 1 });
    const later = await call(app, 'POST', `${url}/replay-failed`, ADMIN, {
      payload: { since: new Date(Date.now() + 60_000).toISOString() },
    });
    t.same(later.json().data, { replayed: 0 }, 'none created since a later time');
    t.equal(await app.webhooks.sender.runDue(), 1);
    t.same(
      (await deliveriesOf(app, url)).map((d) => [d.status, d.attempts]),
      [['delivered', 1]],
    );
    t.equal(receiver.unique().length, 1, 'one event, whatever the attempts');
    t.equal(
      codeOf(await call(app, 'POST', `${url}/replay-failed`, ADMIN, { payload: { since: 'yesterday' } })),
      'validation_failed',
    );
  },
);

t.test('the schedule ends: a delivery that fails every attempt for about 5 days is given up', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const receiver = await startReceiver(t, () => ({ status: 500 }));
  const { endpoint } = await registerEndpoint(app, platformWebhooksUrl(), {
    url: receiver.url,
    events: ['wallet.credited'],
  });
  const url = platformWebhooksUrl(`/${endpoint.id}`);
  await signIn(app, 'wh-spent');
  await credit(app, 'wh-spent');
  await app.webhooks.consumer.catchUp();
  let at = Date.now();
  let delivery: DeliveryView | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    t.equal(await app.webhooks.sender.runDue({ at: new Date(at) }), 1, `attempt ${attempt}`);
    [delivery] = await deliveriesOf(app, url);
    if (delivery?.status !== 'pending') break;
    at = Date.parse(delivery?.nextAttemptAt as string);
  }
  t.match(delivery, { status: 'failed', nextAttemptAt: null }, 'given up');
  const attempts = delivery?.attempts as number;
  t.equal(receiver.received.length, attempts, 'every counted attempt reached the receiver');
  const span = at - Date.now();
  t.ok(span > 80 * 3600_000 && span < 6 * 24 * 3600_000, `about 5 days of retries (${Math.round(span / 3600_000)} h)`);
  // The waits are jittered: the seventeenth attempt ends it, or an earlier one that falls 5 days
  // after the endpoint's first failure, which disables the endpoint (an always-failing receiver).
  const after = (await call(app, 'GET', url, ADMIN)).json().data;
  if (attempts < MAX_ATTEMPTS)
    t.match(after, { enabled: false, disabledReason: 'failing' }, `${attempts} attempts, then disabled`);
  else t.equal(attempts, MAX_ATTEMPTS, 'the seventeenth attempt was the last');
});

t.test('an endpoint that does not answer within 15 s is a failed attempt, retried', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const receiver = await startReceiver(t, () => 'hang');
  const { endpoint } = await registerEndpoint(app, platformWebhooksUrl(), {
    url: receiver.url,
    events: ['wallet.credited'],
  });
  await signIn(app, 'wh-slow');
  await credit(app, 'wh-slow');
  const started = Date.now();
  t.equal(await deliverNow(app), 1);
  const took = Date.now() - started;
  t.ok(took >= 14_000 && took < 25_000, `cut off after about 15 s (${took} ms)`);
  const [delivery] = await deliveriesOf(app, platformWebhooksUrl(`/${endpoint.id}`));
  t.match(delivery, { status: 'pending', attempts: 1, lastStatusCode: null });
  t.ok(delivery?.lastError, `the error says why: ${delivery?.lastError}`);
});

t.test('the test ping: sent on request only, signed, tried once, the endpoint unchanged', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const receiver = await startReceiver(t, () => ({ status: 500 }));
  const { endpoint } = await registerEndpoint(app, platformWebhooksUrl(), {
    url: receiver.url,
    events: ['member.added'],
  });
  const url = platformWebhooksUrl(`/${endpoint.id}`);
  t.equal(receiver.received.length, 0, 'registering sent nothing');

  const failing = await call(app, 'POST', `${url}/test`, ADMIN);
  t.equal(failing.statusCode, 200);
  t.match(failing.json().data, {
    delivery: { type: 'webhook.ping', status: 'failed', attempts: 1, eventId: null, webhookId: /^ping_/ },
    attempt: { outcome: 'failed', statusCode: 500 },
  });
  t.equal(
    (await call(app, 'GET', url, ADMIN)).json().data.failingSince,
    null,
    'a failed ping is no failure of the endpoint',
  );
  t.equal(await app.webhooks.sender.runDue({ at: new Date(Date.now() + DAY) }), 0, 'and is not retried');

  receiver.behave(() => ({ status: 200 }));
  const ok = await call(app, 'POST', `${url}/test`, ADMIN);
  t.match(ok.json().data, { delivery: { status: 'delivered' }, attempt: { outcome: 'delivered', statusCode: 200 } });
  t.match(receiver.received.at(-1)?.json, { type: 'webhook.ping', data: { endpointId: endpoint.id } });
  t.equal(receiver.received.length, 2);

  const gone = await registerEndpoint(app, platformWebhooksUrl(), {
    url: 'http://127.0.0.1:9/nothing-listens',
    events: ['member.added'],
  });
  const refused = await call(app, 'POST', platformWebhooksUrl(`/${gone.endpoint.id}/test`), ADMIN);
  t.match(refused.json().data, { attempt: { outcome: 'failed', statusCode: null } }, 'no listener: a failed attempt');
});

t.test('replaying one delivery sends it again with the same webhook-id', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const receiver = await startReceiver(t);
  const { endpoint } = await registerEndpoint(app, platformWebhooksUrl(), {
    url: receiver.url,
    events: ['wallet.credited'],
  });
  const url = platformWebhooksUrl(`/${endpoint.id}`);
  await signIn(app, 'wh-replay');
  await credit(app, 'wh-replay');
  await deliverNow(app);
  const [delivery] = await deliveriesOf(app, url);
  const replayed = await call(app, 'POST', `${url}/deliveries/${delivery?.id}/replay`, ADMIN);
  t.match(replayed.json().data, { id: delivery?.id, status: 'pending', attempts: 0 });
  t.equal(await app.webhooks.sender.runDue(), 1);
  t.equal(receiver.received.length, 2);
  t.equal(receiver.unique().length, 1, 'the same webhook-id: a receiver that handled it can ignore it');
  t.equal(codeOf(await call(app, 'POST', `${url}/deliveries/nope/replay`, ADMIN)), 'webhook_delivery_not_found');
  t.equal(codeOf(await call(app, 'GET', `${url}/deliveries/nope/attempts`, ADMIN)), 'webhook_delivery_not_found');
});

t.test('in the background a healthy receiver gets an event within about 2 s', async (t) => {
  const app = await buildTestApp(t, { ...LOOPBACK_ENV, EVENT_CONSUMERS: 'true' });
  const receiver = await startReceiver(t);
  await registerEndpoint(app, platformWebhooksUrl(), { url: receiver.url, events: ['wallet.credited'] });
  await signIn(app, 'wh-lag');
  const lags: number[] = [];
  for (let i = 1; i <= 5; i++) {
    const committed = Date.now();
    await credit(app, 'wh-lag');
    await receiver.waitFor(i, 10_000);
    lags.push(Date.now() - committed);
  }
  // The median: a test suite running beside it on the same server can hold back event reads (an
  // event is read once every older transaction of the server has ended) for a moment.
  const median = [...lags].sort((a, b) => a - b)[2] as number;
  t.ok(median < 2000, `lags ${lags.join(', ')} ms`);
  t.comment(`event commit to receipt: ${lags.join(', ')} ms`);
});

t.test('deliveries that ended are pruned after 30 days, with their attempts; pending ones stay', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const healthy = await startReceiver(t);
  const failing = await startReceiver(t, () => ({ status: 500 }));
  const ok = await registerEndpoint(app, platformWebhooksUrl(), { url: healthy.url, events: ['wallet.credited'] });
  const bad = await registerEndpoint(app, platformWebhooksUrl(), { url: failing.url, events: ['wallet.credited'] });
  await signIn(app, 'wh-prune');
  await credit(app, 'wh-prune');
  t.equal(await deliverNow(app), 2);
  t.equal(await app.webhooks.prune(500, new Date(Date.now() + 29 * DAY)), 0, 'nothing within 30 days');
  t.equal(await app.webhooks.prune(500, new Date(Date.now() + 31 * DAY)), 1, 'the delivered one after');
  t.same(await deliveriesOf(app, platformWebhooksUrl(`/${ok.endpoint.id}`)), []);
  t.same(
    (await deliveriesOf(app, platformWebhooksUrl(`/${bad.endpoint.id}`))).map((d) => d.status),
    ['pending'],
    'one still being retried stays',
  );
});
