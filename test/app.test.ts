import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import t from 'tap';
import { securityHeaders } from '../plugins/external/helmet.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../config/index.js';
import { bearer, buildTestApp, createTestDatabase, TEST_ENV, tokenFor } from './support/app.js';

/** Behaviour of the app factory itself: shutdown, request ids, security headers. */

function readResponse(socket: ReturnType<typeof connect>): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk;
      if (/\r\n\r\n[\s\S]*\}$/.test(data)) resolve(data);
    });
    socket.on('close', () => resolve(data));
  });
}

t.test(
  'while shutting down, a request on an open connection gets 503 shutting_down and Connection: close',
  async (t) => {
    const app = await buildTestApp(t);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    // Half a request keeps the connection busy, so closing does not reap it as idle.
    socket.write('GET /api/health HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = app.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const response = readResponse(socket);
    socket.write('\r\n');
    const raw = await response;
    await closing;
    t.match(raw, /^HTTP\/1\.1 503/);
    t.match(raw, /connection: close/i);
    t.match(raw, /retry-after: 1/i);
    t.match(raw, /"code":"shutting_down"/);
    socket.destroy();
  },
);

t.test('responses carry security headers and the JSON content type', async (t) => {
  const app = await buildTestApp(t);
  const res = await app.inject({ url: '/api/health' });
  t.equal(res.headers['x-content-type-options'], 'nosniff');
  t.match(res.headers['content-security-policy'], /default-src 'self'/);
  t.match(res.headers['content-type'], /^application\/json/);
});

t.test('Swagger UI is served at /docs with its own content-security policy', async (t) => {
  const app = await buildTestApp(t);
  const page = await app.inject({ url: '/docs/' });
  t.equal(page.statusCode, 200);
  t.match(page.body, /swagger-ui/);
  const csp = String(page.headers['content-security-policy']);
  t.match(csp, /script-src 'self'/);
  t.equal(csp.split('default-src').length, 2, 'one policy, not the API policy stacked on top');
  // Swagger UI's scripts create <style> elements of their own (its logo's): the policy allows
  // exactly those, by hash, so a browser logs no violation, and no other inline style.
  const preset = await app.inject({ url: '/docs/static/swagger-ui-standalone-preset.js' });
  const created = [...preset.body.matchAll(/createElement\("style",null,("(?:[^"\\]|\\.)*")\)/g)].map(
    ([, literal]) => JSON.parse(literal as string) as string,
  );
  t.ok(
    created.includes('.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}'),
    "the logo's <style>, as Swagger UI creates it",
  );
  const styleSources = /style-src ([^;]*)/.exec(csp)?.[1]?.trim().split(/\s+/) ?? [];
  t.same(
    styleSources.filter((source) => source.startsWith("'sha256-")).sort(),
    created.map((css) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`).sort(),
    'style-src holds the hash of each, and no other',
  );
  t.notOk(styleSources.includes("'unsafe-inline'"), 'no inline style beyond those');
  const json = await app.inject({ url: '/docs/json' });
  t.equal(json.statusCode, 200);
  t.equal(json.json().openapi, '3.1.0');
  t.equal(json.json().servers[0].url, '/', 'Try it out calls the origin the page was opened from');
});

t.test('Swagger UI asks browsers to upgrade to https only when it is served over https', async (t) => {
  // From a plain http address (a LAN IP, a container name) the directive would send the page's
  // scripts to an https origin that is not there: a blank page.
  const app = await buildTestApp(t, { TRUST_PROXY: '1' });
  for (const url of ['/docs/', '/docs/static/swagger-initializer.js']) {
    const plain = await app.inject({ url, headers: { host: '192.168.1.20:3000' } });
    t.equal(plain.statusCode, 200, url);
    t.notMatch(
      String(plain.headers['content-security-policy']),
      /upgrade-insecure-requests/,
      `${url} over http: no upgrade`,
    );
    const secure = await app.inject({ url, headers: { host: 'api.example.com', 'x-forwarded-proto': 'https' } });
    t.match(
      String(secure.headers['content-security-policy']),
      /upgrade-insecure-requests/,
      `${url} over https (behind a trusted proxy): upgrade`,
    );
  }
  t.notMatch(
    String((await app.inject({ url: '/api/health' })).headers['content-security-policy']),
    /upgrade-insecure-requests/,
    'nor does the API over http',
  );
  const api = await app.inject({ url: '/api/health', headers: { 'x-forwarded-proto': 'https' } });
  t.match(String(api.headers['content-security-policy']), /upgrade-insecure-requests/, 'the API over https does');
});

t.test('GET / leads to the docs; DOCS_ENABLED=false turns the docs and the redirect off', async (t) => {
  const app = await buildTestApp(t);
  const root = await app.inject({ url: '/' });
  t.equal(root.statusCode, 302);
  t.equal(root.headers.location, '/docs');
  const off = await buildTestApp(t, { DOCS_ENABLED: 'false' });
  for (const url of ['/', '/docs', '/docs/', '/docs/json']) {
    const res = await off.inject({ url });
    t.equal(res.statusCode, 404, `${url}: 404 with the docs off`);
    t.equal(res.json().error.code, 'route_not_found');
  }
  t.equal((await off.inject({ url: '/api/health' })).statusCode, 200, 'the API is unaffected');
});

t.test('CORS: development allows any origin; production allows only CORS_ORIGINS', async (t) => {
  const dev = await buildTestApp(t);
  const devRes = await dev.inject({ url: '/api/health', headers: { origin: 'https://anywhere.example' } });
  t.equal(devRes.headers['access-control-allow-origin'], '*');

  const prod = await buildTestApp(t, {
    NODE_ENV: 'production',
    PUBLIC_BASE_URL: 'https://api.example.com',
    CORS_ORIGINS: 'https://app.example.com',
  });
  const allowed = await prod.inject({
    method: 'OPTIONS',
    url: '/api/user',
    headers: {
      origin: 'https://app.example.com',
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization,content-type',
    },
  });
  t.equal(allowed.statusCode, 204);
  t.equal(allowed.headers['access-control-allow-origin'], 'https://app.example.com');
  t.match(String(allowed.headers['access-control-allow-headers']), /Authorization/);
  const denied = await prod.inject({ url: '/api/health', headers: { origin: 'https://evil.example' } });
  t.notOk(denied.headers['access-control-allow-origin']);

  // Production without CORS_ORIGINS: no CORS headers at all, so browsers refuse cross-origin calls.
  const closed = await buildTestApp(t, { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com' });
  const preflight = await closed.inject({
    method: 'OPTIONS',
    url: '/api/user',
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PATCH' },
  });
  t.notOk(preflight.headers['access-control-allow-origin']);
  const simple = await closed.inject({ url: '/api/health', headers: { origin: 'https://app.example.com' } });
  t.equal(simple.statusCode, 200);
  t.notOk(simple.headers['access-control-allow-origin']);
});

t.test('security headers are helmet’s, computed once: HSTS only in production, no CSP on docs pages', async (t) => {
  const api = securityHeaders({ strictTransportSecurity: false });
  t.equal(api['x-content-type-options'], 'nosniff');
  t.equal(api['x-frame-options'], 'SAMEORIGIN');
  t.match(api['content-security-policy'], /default-src 'self'/);
  t.notOk(api['strict-transport-security']);
  t.notOk(securityHeaders({ contentSecurityPolicy: false })['content-security-policy']);

  const dev = await buildTestApp(t);
  t.notOk((await dev.inject({ url: '/api/health' })).headers['strict-transport-security'], 'no HSTS in development');
  const prod = await buildTestApp(t, { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com' });
  const res = await prod.inject({ url: '/api/nope' });
  t.equal(res.statusCode, 404);
  t.match(res.headers['strict-transport-security'], /max-age=/, 'HSTS in production, on errors too');
  t.equal(res.headers['x-content-type-options'], 'nosniff');
});

/** The app as buildTestApp makes it, but not yet ready, so a test can add routes first. */
async function unreadyApp(t: { teardown(fn: () => unknown): void }) {
  const database = await createTestDatabase();
  const app = await buildApp(loadConfig({ ...TEST_ENV, DATABASE_URL: database.url }));
  t.teardown(async () => {
    await app.close();
    await database.drop();
  });
  return app;
}

t.test('default deny: every route declares its access, or the app refuses to start', async (t) => {
  await t.test('a route without config.auth stops the start, naming the route', async (t) => {
    const app = await unreadyApp(t);
    app.get('/api/forgotten', { schema: { tags: ['Misc'], summary: 'no access declared' } }, async () => ({
      secret: true,
    }));
    await t.rejects(
      async () => {
        await app.ready();
      },
      { message: /Route GET \/api\/forgotten does not declare its access/ },
    );
  });

  await t.test('routes added after every plugin loaded are guarded and documented like the others', async (t) => {
    const app = await unreadyApp(t);
    const schema = { tags: ['Misc'], summary: 'late route' };
    app.get('/api/late/user', { config: { auth: 'user' }, schema }, async () => ({ ok: true }));
    app.get('/api/late/admin', { config: { auth: 'admin' }, schema }, async () => ({ ok: true }));
    app.get('/api/late/public', { config: { auth: 'public' }, schema }, async () => ({ ok: true }));
    await app.ready();
    t.equal((await app.inject({ url: '/api/late/user' })).statusCode, 401);
    t.equal((await app.inject({ url: '/api/late/admin', headers: bearer(tokenFor('fan')) })).statusCode, 403);
    t.equal(
      (await app.inject({ url: '/api/late/admin', headers: bearer(tokenFor('root', { role: 'admin' })) })).statusCode,
      200,
    );
    t.equal((await app.inject({ url: '/api/late/public' })).statusCode, 200);
    const document = app.swagger() as {
      paths: Record<string, { get: { security?: unknown; responses: Record<string, unknown> } }>;
    };
    t.same(document.paths['/api/late/admin']?.get.security, [{ bearerAuth: [] }]);
    t.ok(document.paths['/api/late/admin']?.get.responses['403'], 'and its 401/403 are declared');
  });
});
