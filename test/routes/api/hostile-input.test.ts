import type { LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import type { App } from '../../../app.js';
import { bearer, buildTestApp } from '../../support/app.js';
import { ADMIN, fakeCursor } from '../../support/catalog.js';

/**
 * Inputs a fuzzer found answering 500 (or worse), sent to every operation of the OpenAPI
 * document that takes them: each answers a 4xx in the error envelope.
 */

interface Operation {
  method: string;
  path: string;
  /** The path with every parameter filled in. */
  url: string;
  hasBody: boolean;
  queryParameters: string[];
}

async function operations(app: App): Promise<Operation[]> {
  const document = app.swagger() as {
    paths: Record<string, Record<string, { requestBody?: unknown; parameters?: { in: string; name: string }[] }>>;
  };
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      url: path.replace(/\{[^}]+\}/g, 'some-id'),
      hasBody: operation.requestBody !== undefined,
      queryParameters: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
    })),
  );
}

function expectClientError(t: Test, res: LightMyRequestResponse, status: number, code: string, what: string) {
  t.equal(res.statusCode, status, `${what}: ${status} (got ${res.statusCode} ${res.body.slice(0, 160)})`);
  t.equal(res.json().error?.code, code, `${what}: ${code}`);
}

t.test('a JSON body nested 5,000 deep is a 400 on every operation with a body, and not a crash', async (t) => {
  const app = await buildTestApp(t);
  // The webhooks keep their bodies as raw bytes, checked by signature or token and never parsed here: below.
  const withBody = (await operations(app)).filter(
    (operation) =>
      operation.hasBody &&
      !['/api/webhooks/stripe', '/api/webhooks/google', '/api/webhooks/apple'].includes(operation.path),
  );
  t.ok(withBody.length >= 9, `${withBody.length} operations take a body`);
  const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
  const deepObject = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
  for (const payload of [deep, deepObject]) {
    const webhook = await app.inject({
      method: 'POST',
      url: '/api/webhooks/stripe',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      payload,
    });
    // Stripe is not configured in this app: refused before the bytes are read, as unsigned ones would be.
    expectClientError(t, webhook, 503, 'checkout_unavailable', 'POST /api/webhooks/stripe, raw bytes never parsed');
    const google = await app.inject({
      method: 'POST',
      url: '/api/webhooks/google',
      headers: { 'content-type': 'application/json', authorization: 'Bearer a.b.c' },
      payload,
    });
    expectClientError(t, google, 503, 'store_unavailable', 'POST /api/webhooks/google, raw bytes never parsed');
    const apple = await app.inject({
      method: 'POST',
      url: '/api/webhooks/apple',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expectClientError(t, apple, 503, 'store_unavailable', 'POST /api/webhooks/apple, raw bytes never parsed');
  }
  for (const operation of withBody) {
    for (const payload of [deep, deepObject]) {
      const res = await app.inject({
        method: operation.method,
        url: operation.url,
        headers: { ...bearer(ADMIN), 'content-type': 'application/json' },
        payload,
      });
      // Refused before the schema sees it (400), or as an unknown resource first (404).
      t.ok([400, 404].includes(res.statusCode), `${operation.method} ${operation.path}: ${res.statusCode}`);
      // The OAuth endpoints (token, revoke) answer 400s as RFC 6749 bodies.
      if (res.statusCode === 400)
        t.equal(
          res.json().error.code ?? res.json().error,
          operation.path.startsWith('/api/auth/') &&
            operation.path !== '/api/auth/mobile/token' &&
            operation.path !== '/api/auth/identities'
            ? 'invalid_request'
            : 'validation_failed',
        );
    }
  }
  const direct = await app.inject({
    method: 'PATCH',
    url: '/api/user',
    headers: { ...bearer(ADMIN), 'content-type': 'application/json' },
    payload: deep,
  });
  expectClientError(t, direct, 400, 'validation_failed', 'PATCH /api/user');
  t.match(direct.json().error.details, [
    { path: /^\/(0\/)+0$/, message: 'is nested too deeply (more than 32 levels)' },
  ]);
});

t.test('unknown routes answer 404 without reading the body', async (t) => {
  const app = await buildTestApp(t);
  for (const payload of ['{not json', `${'['.repeat(5000)}${']'.repeat(5000)}`]) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/nowhere',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expectClientError(t, res, 404, 'route_not_found', `POST /api/nowhere with ${payload.slice(0, 9)}`);
  }
  const xml = await app.inject({
    method: 'PUT',
    url: '/api/nowhere/else',
    headers: { 'content-type': 'application/xml' },
    payload: '<a/>',
  });
  expectClientError(t, xml, 404, 'route_not_found', 'an unknown route is 404, not 415');
});

t.test('?limit=Infinity and friends are a 400 on every list, not a 500', async (t) => {
  const app = await buildTestApp(t);
  const lists = (await operations(app)).filter((operation) => operation.queryParameters.includes('limit'));
  t.ok(lists.length >= 6, `${lists.length} lists`);
  for (const operation of lists) {
    for (const limit of ['Infinity', '-Infinity', '1e400', '-1e400', 'NaN', '1e3', '0', '-1', '2.5', '']) {
      const res = await app.inject({
        method: operation.method,
        url: operation.url,
        headers: bearer(ADMIN),
        query: { limit },
      });
      t.ok(res.statusCode === 400 || res.statusCode === 404, `${operation.path}?limit=${limit}: ${res.statusCode}`);
      // The OAuth endpoints (token, revoke) answer 400s as RFC 6749 bodies.
      if (res.statusCode === 400)
        t.equal(
          res.json().error.code ?? res.json().error,
          operation.path.startsWith('/api/auth/') &&
            operation.path !== '/api/auth/mobile/token' &&
            operation.path !== '/api/auth/identities'
            ? 'invalid_request'
            : 'validation_failed',
        );
    }
  }
  const unauthenticated = await app.inject({ url: '/api/packs?limit=Infinity' });
  expectClientError(t, unauthenticated, 400, 'validation_failed', 'anonymous GET /api/packs?limit=Infinity');
  t.same(unauthenticated.json().error.details, [{ path: '/querystring/limit', message: 'must be a finite number' }]);
  expectClientError(
    t,
    await app.inject({ url: '/api/teams?limit=1e400' }),
    400,
    'validation_failed',
    'anonymous GET /api/teams?limit=1e400',
  );
});

t.test('a cursor carrying a date PostgreSQL cannot hold is a 400 invalid_cursor on every list', async (t) => {
  const app = await buildTestApp(t);
  const lists = (await operations(app)).filter((operation) => operation.queryParameters.includes('cursor'));
  const forged = [
    ['-004714-11-24T00:00:00.000Z', 'x'],
    ['+010000-01-01T00:00:00.000Z', 'x'],
    ['+275760-09-13T00:00:00.000Z', 'x'],
    ['2026-13-01T00:00:00.000Z', 'x'],
  ];
  for (const operation of lists) {
    for (const value of forged) {
      const res = await app.inject({
        method: operation.method,
        url: operation.url,
        headers: bearer(ADMIN),
        query: { cursor: fakeCursor(value) },
      });
      t.ok(res.statusCode === 400 || res.statusCode === 404, `${operation.path} with ${value[0]}: ${res.statusCode}`);
      if (res.statusCode === 400) t.equal(res.json().error.code, 'invalid_cursor');
    }
  }
  // Years 0000 and 9999 are within PostgreSQL's range: they page, and find nothing.
  for (const at of ['0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
    const res = await app.inject({ url: '/api/packs', query: { cursor: fakeCursor([at, 'x']) } });
    t.equal(res.statusCode, 200, at);
  }
});

t.test('thousands of unknown fields: one short 400, not megabytes of details', async (t) => {
  const app = await buildTestApp(t);
  // 650 KB of short keys, under the 1 MiB body limit.
  const fields = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 0]));
  t.ok(JSON.stringify(fields).length < 1024 * 1024);
  const res = await app.inject({
    method: 'POST',
    url: '/api/admin/packs',
    headers: bearer(ADMIN),
    payload: { name: 'x', ...fields },
  });
  expectClientError(t, res, 400, 'validation_failed', '60,000 unknown fields');
  t.ok(res.body.length < 2000, `a short answer (${res.body.length} bytes)`);
  t.same(res.json().error.details, [{ path: '/', message: 'has too many fields (60001; at most 100)' }]);

  // Under the field cap, the details are capped at 20, and the message says how many there were.
  const some = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`field${i}`, i]));
  const capped = await app.inject({
    method: 'POST',
    url: '/api/admin/packs',
    headers: bearer(ADMIN),
    payload: { name: 'x', ...some },
  });
  expectClientError(t, capped, 400, 'validation_failed', '60 unknown fields');
  t.equal(capped.json().error.details.length, 20);
  t.equal(capped.json().error.message, 'The request is not valid: 60 problems, the first 20 listed.');
});

t.test('text must be well-formed Unicode on the way in: 400 naming the field', async (t) => {
  const app = await buildTestApp(t);
  for (const bad of ['a\ud800é\udc00b', 'a\ud800é\udc00é', '\udfff', 'tail\ud83d']) {
    const res = await app.inject({
      method: 'PATCH',
      url: '/api/user',
      headers: bearer(ADMIN),
      payload: { displayName: bad },
    });
    expectClientError(t, res, 400, 'validation_failed', JSON.stringify(bad));
    t.same(res.json().error.details, [
      { path: '/displayName', message: 'must be well-formed Unicode (it holds a lone surrogate)' },
    ]);
  }
  const created = await app.inject({
    method: 'POST',
    url: '/api/admin/collectibles',
    headers: bearer(ADMIN),
    payload: { name: 'ok', description: `x${'\udc00'}` },
  });
  t.same(created.json().error?.details, [
    { path: '/description', message: 'must be well-formed Unicode (it holds a lone surrogate)' },
  ]);
  // A path that is not UTF-8 never reaches a handler.
  expectClientError(
    t,
    await app.inject({ url: '/api/teams/%ED%A0%80' }),
    400,
    'bad_request',
    'an encoded lone surrogate in the path',
  );
});
