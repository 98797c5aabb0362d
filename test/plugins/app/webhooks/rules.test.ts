import t from 'tap';
import {
  afterAttempt,
  endpointsFor,
  eventPayload,
  FAILING_DISABLE_MS,
  JITTER,
  MAX_ATTEMPTS,
  PAYLOAD_MAX_BYTES,
  pingPayload,
  RETRY_DELAYS_MS,
  retryDelayMs,
  signingSecrets,
  endpointUrlProblem,
} from '../../../../plugins/app/webhooks/rules.js';
import type { DomainEvent } from '../../../../schemas/events.js';
import { databaseIndependent } from '../../../support/suites.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

t.test(
  'the retry schedule: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then every 10 h for up to 5 days',
  databaseIndependent,
  async (t) => {
    const expected = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
    t.same([...RETRY_DELAYS_MS], expected);
    t.equal(MAX_ATTEMPTS, 17, 'seventeen attempts in all');
    const waits = Array.from({ length: MAX_ATTEMPTS - 1 }, (_, index) => expected[index] ?? 10 * HOUR);
    waits.forEach((base, index) => {
      const attempts = index + 1;
      t.equal(retryDelayMs(attempts, 0.5), base, `after attempt ${attempts}, without jitter: ${base} ms`);
      t.equal(retryDelayMs(attempts, 0), Math.round(base * (1 - JITTER)), 'the earliest');
      t.ok((retryDelayMs(attempts, 0.999_999) as number) <= base * (1 + JITTER), 'the latest');
    });
    t.equal(retryDelayMs(MAX_ATTEMPTS, 0.5), null, 'after the last: no more');
    t.equal(retryDelayMs(0, 0.5), null, 'nothing before a first attempt');
    t.equal(retryDelayMs(100, 0.5), null);
    for (let attempts = 2; attempts <= 7; attempts++) {
      t.ok(
        (retryDelayMs(attempts, 0) as number) > (retryDelayMs(attempts - 1, 0.999_999) as number) ||
          RETRY_DELAYS_MS[attempts - 1] === RETRY_DELAYS_MS[attempts - 2],
        `wait ${attempts} is longer than wait ${attempts - 1}, whatever the jitter (or the same step)`,
      );
    }
    const total = waits.reduce((sum, delay) => sum + delay, 0);
    t.ok(total <= FAILING_DISABLE_MS, 'retries end within the time a failing endpoint is kept');
    t.ok(total + 10 * HOUR > FAILING_DISABLE_MS, 'one more wait would pass it');
    t.ok(total > 117 * HOUR, 'about 4.9 days of retries');
    t.ok(
      (1 / 3) ** MAX_ATTEMPTS * 10_000 < 0.001,
      'a receiver failing a random third of the attempts loses none of 10,000 deliveries but by a chance under 1 in 1,000',
    );
  },
);

t.test('target URLs: https to public hosts; literal inside addresses refused', databaseIndependent, async (t) => {
  for (const url of [
    'https://hooks.example.com/in',
    'https://hooks.example.com:8443/in?key=1',
    'https://93.184.216.34/in',
    'https://[2606:2800:220:1:248:1893:25c8:1946]/in',
  ]) {
    t.equal(endpointUrlProblem(url, false), null, url);
  }
  for (const url of [
    'http://hooks.example.com/in',
    'ftp://hooks.example.com/in',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'not a url',
    '',
    'https://127.0.0.1/in',
    'https://0.0.0.0/in',
    'https://10.1.2.3/in',
    'https://172.16.0.1/in',
    'https://192.168.0.1/in',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/in',
    'https://[::1]/in',
    'https://[fe80::1]/in',
    'https://[fd00::1]/in',
    'https://[::ffff:127.0.0.1]/in',
    'https://[::ffff:169.254.169.254]/in',
    'https://2130706433/in',
    'https://0x7f.1/in',
    'https://localhost/in',
    'https://api.localhost/in',
    'https://user:secret@hooks.example.com/in',
    'https://hooks.example.com/in#part',
  ]) {
    t.type(endpointUrlProblem(url, false), 'string', `${url} refused`);
  }
  t.match(endpointUrlProblem('https://169.254.169.254/', false), /refused/);
  t.match(endpointUrlProblem('http://hooks.example.com/', false), /https/);
});

t.test(
  'with private targets allowed: loopback and private hosts, plain http only to loopback',
  databaseIndependent,
  async (t) => {
    for (const url of [
      'http://127.0.0.1:4000/in',
      'http://localhost:4000/in',
      'http://[::1]:4000/in',
      'https://10.0.0.2/in',
    ]) {
      t.equal(endpointUrlProblem(url, true), null, url);
    }
    for (const url of ['http://hooks.example.com/in', 'http://10.0.0.2/in', 'ftp://127.0.0.1/in']) {
      t.type(endpointUrlProblem(url, true), 'string', `${url} refused`);
    }
  },
);

const event = (
  teamId: string | null,
  type: DomainEvent['type'] = 'member.added',
  occurredAt = new Date('2026-11-01T00:00:00Z'),
) =>
  ({
    id: '42',
    type,
    occurredAt,
    teamId,
    userId: 'u1',
    subject: 'u1',
    data: { teamId: teamId ?? 'x', userId: 'u1', role: 'viewer' },
  }) as DomainEvent;

const endpoint = (
  id: string,
  teamId: string | null,
  eventTypes: string[] = ['member.added'],
  createdAt = new Date('2026-10-01T00:00:00Z'),
) => ({
  id,
  teamId,
  eventTypes,
  createdAt,
});

t.test(
  "fan-out: a team's endpoints get their team's events only; the platform's get all",
  databaseIndependent,
  async (t) => {
    const endpoints = [
      endpoint('a', 'team-a'),
      endpoint('b', 'team-b'),
      endpoint('p', null),
      endpoint('a2', 'team-a', ['pack.opened']),
    ];
    const ids = (teamId: string | null) => endpointsFor(event(teamId), endpoints).map((e) => e.id);
    t.same(ids('team-a'), ['a', 'p']);
    t.same(ids('team-b'), ['b', 'p']);
    t.same(ids('team-c'), ['p']);
    t.same(ids(null), ['p'], 'an event of no team: the platform only');
    t.same(
      endpointsFor(event('team-a', 'member.added', new Date('2026-09-01T00:00:00Z')), endpoints).map((e) => e.id),
      [],
      'nothing that happened before an endpoint was registered',
    );
  },
);

t.test('payloads: { type, timestamp, data } with the ids; thinned past 20 KB', databaseIndependent, async (t) => {
  const body = JSON.parse(eventPayload(event('team-a')));
  t.same(body, {
    type: 'member.added',
    timestamp: '2026-11-01T00:00:00.000Z',
    data: { teamId: 'team-a', userId: 'u1', subject: 'u1', role: 'viewer' },
  });
  const pulls = Array.from({ length: 100 }, (_, index) => ({
    pullId: `p${index}`.padEnd(128, 'x'),
    collectibleId: `c${index}`.padEnd(128, 'y'),
    rarity: 'rare',
    points: 1,
    serialNumber: index + 1,
  }));
  const big = {
    ...event('team-a', 'pack.opened'),
    subject: 'up1',
    data: { userPackId: 'up1', packId: 'pk1', pulls },
  } as DomainEvent;
  const sent = eventPayload(big);
  t.ok(Buffer.byteLength(sent) <= PAYLOAD_MAX_BYTES);
  t.same(JSON.parse(sent).data, { teamId: 'team-a', userId: 'u1', subject: 'up1', truncated: true });
  const fitting = { ...big, data: { userPackId: 'up1', packId: 'pk1', pulls: pulls.slice(0, 10) } } as DomainEvent;
  t.equal(JSON.parse(eventPayload(fitting)).data.pulls.length, 10, 'one that fits is sent whole');
  t.match(JSON.parse(pingPayload('ep1', new Date(0))), { type: 'webhook.ping', data: { endpointId: 'ep1' } });
});

t.test('signing secrets: the old one beside the new until the overlap ends', databaseIndependent, async (t) => {
  const now = new Date('2026-11-01T12:00:00Z');
  const rotated = { secret: 'new', previousSecret: 'old', previousSecretExpiresAt: new Date('2026-11-02T00:00:00Z') };
  t.same(signingSecrets(rotated, now), ['new', 'old']);
  t.same(signingSecrets(rotated, new Date('2026-11-02T00:00:00Z')), ['new'], 'expired at its time');
  t.same(signingSecrets({ secret: 'only', previousSecret: null, previousSecretExpiresAt: null }, now), ['only']);
});

t.test('after an attempt: delivered, retried, given up, disabled', databaseIndependent, async (t) => {
  const at = new Date('2026-11-01T00:00:00Z');
  const fresh = { attempts: 1, ping: false, failingSince: null };
  const ok = afterAttempt(fresh, { outcome: 'delivered', status: 204, error: null }, at, 0.5);
  t.same(ok, {
    delivery: { status: 'delivered', nextAttemptAt: null, deliveredAt: at, lastError: null },
    failingSince: null,
  });

  const failed = afterAttempt(fresh, { outcome: 'failed', status: 500, error: null }, at, 0.5);
  t.same(failed.delivery, {
    status: 'pending',
    nextAttemptAt: new Date(at.getTime() + 5000),
    deliveredAt: null,
    lastError: 'answered HTTP 500',
  });
  t.same(failed.failingSince, at, 'a first failure starts the run');
  t.notOk(failed.disable);

  const earlier = new Date(at.getTime() - HOUR);
  t.same(
    afterAttempt({ ...fresh, failingSince: earlier }, { outcome: 'refused', status: null, error: 'loopback' }, at, 0.5)
      .failingSince,
    earlier,
    'a run keeps its start',
  );

  const spent = afterAttempt(
    { ...fresh, attempts: MAX_ATTEMPTS },
    { outcome: 'failed', status: null, error: 'timed out' },
    at,
    0.5,
  );
  t.equal(spent.delivery.status, 'failed', 'the last failure gives up');
  t.equal(spent.delivery.lastError, 'timed out');

  const gone = afterAttempt(fresh, { outcome: 'gone', status: 410, error: null }, at, 0.5);
  t.equal(gone.delivery.status, 'failed');
  t.equal(gone.disable?.reason, 'gone');

  const longFailing = new Date(at.getTime() - FAILING_DISABLE_MS);
  const disabled = afterAttempt(
    { ...fresh, attempts: 3, failingSince: longFailing },
    { outcome: 'failed', status: 503, error: null },
    at,
    0.5,
  );
  t.equal(disabled.disable?.reason, 'failing');
  t.match(disabled.disable?.detail, /since 2026-10-27T00:00:00.000Z.*503/);
  t.equal(disabled.delivery.status, 'failed');
  const almost = afterAttempt(
    { ...fresh, attempts: 3, failingSince: new Date(longFailing.getTime() + 1) },
    { outcome: 'failed', status: 503, error: null },
    at,
    0.5,
  );
  t.notOk(almost.disable, 'not a moment before 5 days');

  const ping = { attempts: 1, ping: true, failingSince: null };
  t.same(
    afterAttempt(ping, { outcome: 'gone', status: 410, error: null }, at, 0.5),
    {
      delivery: { status: 'failed', nextAttemptAt: null, deliveredAt: null, lastError: 'answered HTTP 410' },
    },
    'a ping is tried once and changes nothing of its endpoint',
  );
  t.notOk('failingSince' in afterAttempt(ping, { outcome: 'delivered', status: 200, error: null }, at, 0.5));
});
