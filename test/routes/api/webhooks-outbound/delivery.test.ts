import { Webhook } from 'standardwebhooks';
import t from 'tap';
import type { DomainEvent } from '../../../../schemas/events.js';
import { fanOut } from '../../../../plugins/app/webhooks/fan-out.js';
import { buildTestApp } from '../../../support/app.js';
import { ADMIN } from '../../../support/catalog.js';
import { adjust, expectStatus } from '../../../support/economy.js';
import { addMember, call, signIn, staffedTeam } from '../../../support/teams.js';
import {
  deliverNow,
  deliveriesOf,
  LOOPBACK_ENV,
  platformWebhooksUrl,
  type Received,
  registerEndpoint,
  startReceiver,
  teamWebhooksUrl,
} from '../../../support/webhooks.js';

/** Events reach the endpoints that should get them, signed, once as the receiver sees it, and only theirs. */

const headersOf = (received: Received) =>
  Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(received.headers[name])]),
  );

t.test(
  'a team event is delivered, signed (verified with the standardwebhooks library), with the event id',
  async (t) => {
    const app = await buildTestApp(t, LOOPBACK_ENV);
    const receiver = await startReceiver(t);
    const { team, owner } = await staffedTeam(app, 'wh-one');
    const { endpoint, secret } = await registerEndpoint(
      app,
      teamWebhooksUrl(team.id),
      { url: receiver.url, events: ['member.added'] },
      owner,
    );
    await signIn(app, 'wh-one-new');
    await addMember(app, team.id, 'wh-one-new', 'viewer', owner);
    t.equal(await deliverNow(app), 1, 'one attempt');
    t.equal(receiver.received.length, 1);
    const [got] = receiver.received as [Received];
    const verified = new Webhook(secret).verify(got.body, headersOf(got)) as Received['json'];
    t.match(verified, {
      type: 'member.added',
      data: { teamId: team.id, userId: 'wh-one-new', subject: 'wh-one-new', role: 'viewer' },
    });
    t.match(verified.timestamp, /^\d{4}-\d{2}-\d{2}T/);
    t.equal(got.headers['content-type'], 'application/json');
    t.throws(() => new Webhook(secret).verify(`${got.body} `, headersOf(got)), 'a changed body fails');

    const [delivery] = await deliveriesOf(app, teamWebhooksUrl(team.id, `/${endpoint.id}`), owner);
    t.match(delivery, { status: 'delivered', attempts: 1, type: 'member.added', lastStatusCode: 204, lastError: null });
    t.equal(got.headers['webhook-id'], delivery?.eventId, 'webhook-id is the event id');
    t.equal(await deliverNow(app), 0, 'nothing more to send');
  },
);

t.test('retries with backoff until the receiver answers: it sees the event once after deduping', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  // Fails twice (a 500, then a redirect, never followed), then accepts.
  const elsewhere = await startReceiver(t);
  const receiver = await startReceiver(t, (_request, index) =>
    index === 0
      ? { status: 500 }
      : index === 1
        ? { status: 302, headers: { location: elsewhere.url } }
        : { status: 200 },
  );
  const { endpoint } = await registerEndpoint(app, platformWebhooksUrl(), {
    url: receiver.url,
    events: ['wallet.credited'],
  });
  await signIn(app, 'wh-retry-fan');
  expectStatus(await adjust(app, 'wh-retry-fan', { amount: 5, reason: 'retry test' }), 201, 'credit');

  await app.webhooks.consumer.catchUp();
  const start = Date.now();
  t.equal(await deliverNow(app, new Date(start)), 1, 'the first attempt');
  const url = platformWebhooksUrl(`/${endpoint.id}`);
  let [delivery] = await deliveriesOf(app, url);
  t.match(delivery, { status: 'pending', attempts: 1, lastStatusCode: 500 });
  const wait = Date.parse(delivery?.nextAttemptAt as string) - start;
  t.ok(wait >= 4000 && wait <= 6000, `the first retry after about 5 s (${wait} ms)`);
  t.equal(await deliverNow(app, new Date(start + 3000)), 0, 'not before it is due');

  t.equal(await deliverNow(app, new Date(start + 6001)), 1, 'the second attempt');
  [delivery] = await deliveriesOf(app, url);
  t.match(delivery, { status: 'pending', attempts: 2, lastStatusCode: 302 });
  const secondWait = Date.parse(delivery?.nextAttemptAt as string) - (start + 6001);
  t.ok(secondWait >= 4 * 60_000 && secondWait <= 6 * 60_000, `then after about 5 min (${secondWait} ms)`);
  t.equal(elsewhere.received.length, 0, 'the redirect was not followed');

  t.equal(await deliverNow(app, new Date(start + 6001 + 6 * 60_000)), 1, 'the third attempt');
  [delivery] = await deliveriesOf(app, url);
  t.match(delivery, { status: 'delivered', attempts: 3, nextAttemptAt: null });
  t.equal(receiver.received.length, 3, 'three requests');
  t.equal(receiver.unique().length, 1, 'one event after deduping by webhook-id');
  t.same(new Set(receiver.received.map((r) => r.body)).size, 1, 'the same body every time');

  const attempts = await call(app, 'GET', `${url}/deliveries/${delivery?.id}/attempts`, ADMIN);
  t.same(
    attempts.json().data.map((a: { outcome: string; statusCode: number }) => [a.outcome, a.statusCode]),
    [
      ['delivered', 200],
      ['failed', 302],
      ['failed', 500],
    ],
    'each attempt recorded, newest first',
  );
  t.ok(attempts.json().data.every((a: { durationMs: number }) => a.durationMs >= 0));
  t.equal(
    (await call(app, 'GET', `${url}/deliveries`, ADMIN, { query: { status: 'failed' } })).json().data.length,
    0,
    'none failed',
  );
  const endpointNow = (await call(app, 'GET', url, ADMIN)).json().data;
  t.equal(endpointNow.failingSince, null, 'a success ends the run of failures');
});

t.test("a team's endpoint never receives another team's events; the platform's receives all", async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const a = await staffedTeam(app, 'wh-a');
  const b = await staffedTeam(app, 'wh-b');
  const [receiverA, receiverB, receiverP] = await Promise.all([startReceiver(t), startReceiver(t), startReceiver(t)]);
  const events = ['member.added', 'wallet.credited'];
  await registerEndpoint(app, teamWebhooksUrl(a.team.id), { url: receiverA.url, events }, a.owner);
  await registerEndpoint(app, teamWebhooksUrl(b.team.id), { url: receiverB.url, events }, b.owner);
  await registerEndpoint(app, platformWebhooksUrl(), { url: receiverP.url, events });
  for (const sub of ['wh-x1', 'wh-x2', 'wh-x3']) await signIn(app, sub);
  await addMember(app, a.team.id, 'wh-x1', 'viewer');
  await addMember(app, b.team.id, 'wh-x2', 'viewer');
  await addMember(app, b.team.id, 'wh-x3', 'editor');
  expectStatus(await adjust(app, 'wh-x1', { amount: 3, reason: 'no team' }), 201, 'credit');
  await deliverNow(app);

  const teamsOf = (receiver: typeof receiverA) => receiver.received.map((r) => [r.json.type, r.json.data.teamId]);
  t.same(teamsOf(receiverA), [['member.added', a.team.id]], 'team A: its one event');
  t.same(
    teamsOf(receiverB).sort(),
    [
      ['member.added', b.team.id],
      ['member.added', b.team.id],
    ],
    'team B: its two',
  );
  t.same(
    teamsOf(receiverP)
      .map(([type]) => type)
      .sort(),
    ['member.added', 'member.added', 'member.added', 'wallet.credited'],
    'the platform: every event, the one of no team too',
  );
});

t.test('handling the same events again creates no second delivery', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const receiver = await startReceiver(t);
  const { endpoint } = await registerEndpoint(app, platformWebhooksUrl(), {
    url: receiver.url,
    events: ['wallet.credited'],
  });
  await signIn(app, 'wh-again');
  expectStatus(await adjust(app, 'wh-again', { amount: 1, reason: 'once' }), 201, 'credit');
  await deliverNow(app);
  const url = platformWebhooksUrl(`/${endpoint.id}`);
  const [delivery] = await deliveriesOf(app, url);
  const event = {
    id: delivery?.eventId as string,
    type: 'wallet.credited',
    occurredAt: new Date(),
    userId: 'wh-again',
    teamId: null,
    subject: 'x',
    data: { entryId: 'x', amount: 1, balanceAfter: 1, kind: 'adjustment', reference: null },
  } as DomainEvent;
  await app.db.transaction((tx) => fanOut(tx, [event, event]));
  t.equal((await deliveriesOf(app, url)).length, 1, 'still one delivery');
  t.equal(await app.webhooks.sender.runDue(), 0);
  t.equal(receiver.received.length, 1);
});

t.test('a rotated secret: both signatures for 24 hours, each verifies', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const receiver = await startReceiver(t);
  const { endpoint, secret: old } = await registerEndpoint(app, platformWebhooksUrl(), {
    url: receiver.url,
    events: ['wallet.credited'],
  });
  const rotated = await call(app, 'POST', platformWebhooksUrl(`/${endpoint.id}/rotate-secret`), ADMIN);
  const fresh = rotated.json().data.secret as string;
  await signIn(app, 'wh-rot');
  expectStatus(await adjust(app, 'wh-rot', { amount: 1, reason: 'rotation' }), 201, 'credit');
  await deliverNow(app);
  const [got] = receiver.received as [Received];
  t.equal(String(got.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
  t.ok(new Webhook(fresh).verify(got.body, headersOf(got)), 'the new secret verifies');
  t.ok(new Webhook(old).verify(got.body, headersOf(got)), 'the old one too, during the overlap');
  t.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(got.body, headersOf(got)));
});
