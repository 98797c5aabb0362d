import t from 'tap';
import { buildTestApp, tokenFor } from '../../../support/app.js';
import { ADMIN } from '../../../support/catalog.js';
import { call, codeOf, detailPaths, signIn, staffedTeam, teamAudit } from '../../../support/teams.js';
import {
  LOOPBACK_ENV,
  platformWebhooksUrl,
  registerEndpoint,
  startReceiver,
  teamWebhooksUrl,
} from '../../../support/webhooks.js';

/** Registering, changing and removing endpoints: who may, what URLs are refused, and that nothing connects. */

const ENDPOINT_KEYS = [
  'createdAt',
  'createdBy',
  'description',
  'disabledAt',
  'disabledDetail',
  'disabledReason',
  'enabled',
  'events',
  'failingSince',
  'id',
  'previousSecretExpiresAt',
  'teamId',
  'updatedAt',
  'url',
];

t.test('an owner registers, reads, changes, rotates and removes an endpoint; nothing connects', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const receiver = await startReceiver(t);
  const { team, owner } = await staffedTeam(app, 'wh-crud');
  const base = teamWebhooksUrl(team.id);

  const created = await call(app, 'POST', base, owner, {
    payload: { url: receiver.url, events: ['member.added', 'pack.opened'], description: '  Our CRM  ' },
  });
  t.equal(created.statusCode, 201);
  const { endpoint, secret } = created.json().data;
  t.match(secret, /^whsec_[A-Za-z0-9+/=]{32,}$/, 'the secret is shown, once');
  t.same(Object.keys(endpoint).sort(), ENDPOINT_KEYS, 'the endpoint never shows a secret');
  t.match(endpoint, {
    teamId: team.id,
    url: receiver.url,
    events: ['member.added', 'pack.opened'],
    description: 'Our CRM',
    enabled: true,
    disabledReason: null,
    createdBy: 'wh-crud-owner',
  });

  const url = teamWebhooksUrl(team.id, `/${endpoint.id}`);
  const read = await call(app, 'GET', url, owner);
  t.equal(read.statusCode, 200);
  t.notOk(read.body.includes(secret), 'reading never answers the secret');
  const listed = await call(app, 'GET', base, owner);
  t.same(
    listed.json().data.map((e: { id: string }) => e.id),
    [endpoint.id],
  );
  t.notOk(listed.body.includes('whsec_'), 'nor does the list');

  const patched = await call(app, 'PATCH', url, owner, { payload: { events: ['purchase.completed'], enabled: false } });
  t.equal(patched.statusCode, 200);
  t.match(patched.json().data, { events: ['purchase.completed'], enabled: false, disabledReason: 'manual' });
  const withToken = await call(app, 'PATCH', url, owner, { payload: { url: `${receiver.url}?token=s3cr3t` } });
  t.equal(withToken.json().data.url, `${receiver.url}?token=s3cr3t`, 'the owner sees the whole URL');
  const enabled = await call(app, 'PATCH', url, owner, { payload: { enabled: true } });
  t.match(enabled.json().data, { enabled: true, disabledReason: null, disabledAt: null, disabledDetail: null });

  const rotated = await call(app, 'POST', `${url}/rotate-secret`, owner);
  t.equal(rotated.statusCode, 200);
  const next = rotated.json().data;
  t.not(next.secret, secret, 'a new secret');
  const overlap = Date.parse(next.endpoint.previousSecretExpiresAt) - Date.now();
  t.ok(overlap > 23.9 * 3600_000 && overlap <= 24 * 3600_000, 'the old one signs for 24 more hours');

  t.equal(receiver.received.length, 0, 'registering, changing and rotating connected nowhere');

  const removed = await call(app, 'DELETE', url, owner);
  t.equal(removed.statusCode, 200);
  t.equal(removed.json().data.id, endpoint.id);
  t.equal(codeOf(await call(app, 'GET', url, owner)), 'webhook_not_found');
  t.equal(codeOf(await call(app, 'DELETE', url, owner)), 'webhook_not_found');

  const audit = (await teamAudit(app, team.id)).filter((entry) => entry.targetType === 'webhook');
  t.same(
    audit.map((entry) => entry.action),
    ['webhook.delete', 'webhook.rotate_secret', 'webhook.update', 'webhook.update', 'webhook.update', 'webhook.create'],
    'every change is audited',
  );
  const text = JSON.stringify(audit);
  t.notOk(text.includes('whsec_'), 'no secret in the audit log');
  t.notOk(text.includes('s3cr3t'), "nor a URL's query: viewers read the audit log");
});

t.test('team owners and platform admins only', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const { team, owner, editor, viewer } = await staffedTeam(app, 'wh-auth');
  const other = await staffedTeam(app, 'wh-other');
  const fan = await signIn(app, 'wh-fan');
  const base = teamWebhooksUrl(team.id);
  const body = { url: 'https://hooks.example.com/a', events: ['member.added'] };
  const { endpoint } = await registerEndpoint(app, base, body, owner);
  const url = teamWebhooksUrl(team.id, `/${endpoint.id}`);

  for (const [who, token] of [
    ['editor', editor],
    ['viewer', viewer],
  ] as const) {
    t.equal((await call(app, 'GET', base, token)).statusCode, 403, `${who} cannot list`);
    t.equal((await call(app, 'POST', base, token, { payload: body })).statusCode, 403, `${who} cannot register`);
    t.equal((await call(app, 'PATCH', url, token, { payload: { enabled: false } })).statusCode, 403);
    t.equal((await call(app, 'POST', `${url}/rotate-secret`, token)).statusCode, 403, `${who} cannot rotate`);
    t.equal((await call(app, 'GET', `${url}/deliveries`, token)).statusCode, 403, `${who} cannot read deliveries`);
  }
  const outsider = await call(app, 'GET', base, other.owner);
  t.equal(outsider.statusCode, 404, "another team's owner: the team is unknown to them");
  t.equal(codeOf(outsider), 'team_not_found');
  t.equal((await call(app, 'DELETE', url, other.owner)).statusCode, 404);
  t.equal(
    (await call(app, 'GET', teamWebhooksUrl(other.team.id, `/${endpoint.id}`), other.owner)).statusCode,
    404,
    'an endpoint read through another team is unknown there',
  );
  t.equal((await call(app, 'GET', base, fan)).statusCode, 403, 'a fan without any role');
  t.equal((await call(app, 'GET', base, null)).statusCode, 401, 'anonymous');
  t.equal((await call(app, 'GET', url, ADMIN)).statusCode, 200, 'a platform admin reads it');
  t.equal(
    (await call(app, 'PATCH', url, ADMIN, { payload: { description: 'by admin' } })).statusCode,
    200,
    'and changes it',
  );
  t.equal(codeOf(await call(app, 'GET', teamWebhooksUrl('no-such-team'), ADMIN)), 'team_not_found');

  // The platform's own endpoints: platform admins only; a team endpoint is not one of them.
  t.equal((await call(app, 'GET', platformWebhooksUrl(), owner)).statusCode, 403, 'a team owner');
  t.equal((await call(app, 'POST', platformWebhooksUrl(), owner, { payload: body })).statusCode, 403);
  const platform = await registerEndpoint(app, platformWebhooksUrl(), body);
  t.equal(platform.endpoint.teamId, null);
  t.equal(codeOf(await call(app, 'GET', platformWebhooksUrl(`/${endpoint.id}`), ADMIN)), 'webhook_not_found');
  t.equal(
    codeOf(await call(app, 'GET', teamWebhooksUrl(team.id, `/${platform.endpoint.id}`), owner)),
    'webhook_not_found',
  );
  t.same(
    (await call(app, 'GET', platformWebhooksUrl(), ADMIN)).json().data.map((e: { id: string }) => e.id),
    [platform.endpoint.id],
    "the platform's list holds its own endpoints only",
  );

  // A demoted owner loses access at once (the editor becomes the owner the team keeps).
  const promoted = await call(app, 'PATCH', `/api/admin/teams/${team.id}/members/wh-auth-editor`, ADMIN, {
    payload: { role: 'owner' },
  });
  t.equal(promoted.statusCode, 200);
  const demoted = await call(app, 'PATCH', `/api/admin/teams/${team.id}/members/wh-auth-owner`, ADMIN, {
    payload: { role: 'viewer' },
  });
  t.equal(demoted.statusCode, 200);
  t.equal((await call(app, 'GET', base, tokenFor('wh-auth-owner'))).statusCode, 403);
});

t.test('URLs that could reach inside are refused at registration, without connecting', async (t) => {
  const app = await buildTestApp(t, { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'false' });
  const base = platformWebhooksUrl();
  const refused = [
    'https://127.0.0.1/hook',
    'https://127.1.2.3:8443/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://10.0.0.8/hook',
    'https://192.168.1.1/hook',
    'https://localhost/hook',
    'http://hooks.example.com/hook',
    'ftp://hooks.example.com/hook',
    'file:///etc/passwd',
    'https://user:password@hooks.example.com/hook',
    'not a url',
    '/relative/path',
  ];
  for (const url of refused) {
    const res = await call(app, 'POST', base, ADMIN, { payload: { url, events: ['member.added'] } });
    t.equal(res.statusCode, 400, url);
    t.same(detailPaths(res), ['/url'], `${url}: the url is named`);
  }
  const accepted = await call(app, 'POST', base, ADMIN, {
    payload: { url: 'https://hooks.example.com/a?b=c', events: ['member.added'] },
  });
  t.equal(accepted.statusCode, 201, 'a public https URL');
  const { id } = accepted.json().data.endpoint;
  const patched = await call(app, 'PATCH', platformWebhooksUrl(`/${id}`), ADMIN, {
    payload: { url: 'https://169.254.169.254/' },
  });
  t.equal(codeOf(patched), 'invalid_webhook_url', 'a change of URL is checked the same way');
});

t.test('with private targets allowed, plain http reaches loopback only', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const base = platformWebhooksUrl();
  for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/hook']) {
    t.equal(
      (await call(app, 'POST', base, ADMIN, { payload: { url, events: ['member.added'] } })).statusCode,
      201,
      url,
    );
  }
  for (const url of ['http://hooks.example.com/hook', 'http://10.0.0.8/hook', 'gopher://127.0.0.1/']) {
    t.equal(
      codeOf(await call(app, 'POST', base, ADMIN, { payload: { url, events: ['member.added'] } })),
      'invalid_webhook_url',
      url,
    );
  }
});

t.test('bodies are strict', async (t) => {
  const app = await buildTestApp(t, LOOPBACK_ENV);
  const base = platformWebhooksUrl();
  const cases: [Record<string, unknown>, string][] = [
    [{ url: 'https://h.example.com', events: [] }, '/events'],
    [{ url: 'https://h.example.com', events: ['no.such_event'] }, '/events/0'],
    [{ url: 'https://h.example.com', events: ['member.added', 'member.added'] }, '/events'],
    [{ url: 'https://h.example.com' }, '/events'],
    [{ events: ['member.added'] }, '/url'],
    [{ url: 'https://h.example.com', events: ['member.added'], secret: 'whsec_mine' }, '/secret'],
    [{ url: 'https://h.example.com', events: ['member.added'], enabled: 'yes' }, '/enabled'],
    [{ url: `https://h.example.com/${'a'.repeat(2100)}`, events: ['member.added'] }, '/url'],
  ];
  for (const [payload, path] of cases) {
    const res = await call(app, 'POST', base, ADMIN, { payload });
    t.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 80));
    t.ok(
      detailPaths(res).some((p) => p.startsWith(path)),
      `${path} named: ${detailPaths(res).join(', ')}`,
    );
  }
  const { endpoint } = await registerEndpoint(app, base, { url: 'https://h.example.com', events: ['member.added'] });
  t.equal((await call(app, 'PATCH', platformWebhooksUrl(`/${endpoint.id}`), ADMIN, { payload: {} })).statusCode, 400);
  const badCursor = await call(app, 'GET', `${platformWebhooksUrl(`/${endpoint.id}`)}/deliveries`, ADMIN, {
    query: { cursor: 'garbage' },
  });
  t.equal(codeOf(badCursor), 'invalid_cursor');
  const badStatus = await call(app, 'GET', `${platformWebhooksUrl(`/${endpoint.id}`)}/deliveries`, ADMIN, {
    query: { status: 'lost' },
  });
  t.equal(badStatus.statusCode, 400);
});
