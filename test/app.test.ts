import { connect } from 'node:net';
import t from 'tap';
import { securityHeaders } from '../plugins/external/helmet.js';
import { buildTestApp } from './support/app.js';

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

t.test('while shutting down, a request on an open connection gets 503 shutting_down and Connection: close', async (t) => {
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
});

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
  const json = await app.inject({ url: '/docs/json' });
  t.equal(json.statusCode, 200);
  t.equal(json.json().openapi, '3.1.0');
});

t.test('CORS: development allows any origin; production allows only CORS_ORIGINS', async (t) => {
  const dev = await buildTestApp(t);
  const devRes = await dev.inject({ url: '/api/health', headers: { origin: 'https://anywhere.example' } });
  t.equal(devRes.headers['access-control-allow-origin'], '*');

  const prod = await buildTestApp(t, { NODE_ENV: 'production', CORS_ORIGINS: 'https://app.example.com' });
  const allowed = await prod.inject({
    method: 'OPTIONS',
    url: '/api/user',
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization,content-type' },
  });
  t.equal(allowed.statusCode, 204);
  t.equal(allowed.headers['access-control-allow-origin'], 'https://app.example.com');
  t.match(String(allowed.headers['access-control-allow-headers']), /Authorization/);
  const denied = await prod.inject({ url: '/api/health', headers: { origin: 'https://evil.example' } });
  t.notOk(denied.headers['access-control-allow-origin']);

  // Production without CORS_ORIGINS: no CORS headers at all, so browsers refuse cross-origin calls.
  const closed = await buildTestApp(t, { NODE_ENV: 'production' });
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
  const prod = await buildTestApp(t, { NODE_ENV: 'production' });
  const res = await prod.inject({ url: '/api/nope' });
  t.equal(res.statusCode, 404);
  t.match(res.headers['strict-transport-security'], /max-age=/, 'HSTS in production, on errors too');
  t.equal(res.headers['x-content-type-options'], 'nosniff');
});
