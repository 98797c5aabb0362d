import t from 'tap';
import { buildTestApp } from '../../support/app.js';

t.test('GET /api/health answers 200 with the request id echoed', async (t) => {
  const app = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'probe-1' } });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['x-request-id'], 'probe-1');
  t.match(res.json(), { success: true, data: { status: 'ok' } });
});

t.test('a request id that is not safe to log is replaced', async (t) => {
  const app = await buildTestApp(t);
  const res = await app.inject({
    method: 'GET',
    url: '/api/health',
    headers: { 'x-request-id': 'evil\u0000id with spaces' },
  });
  t.equal(res.statusCode, 200);
  t.match(res.headers['x-request-id'], /^[0-9a-f]{8}-[0-9a-z]+$/);
});

t.test('GET /api/health/ready reports the database', async (t) => {
  const app = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/health/ready' });
  t.equal(res.statusCode, 200);
  t.same(res.json().data, { status: 'ready', database: app.db.engine });
});

t.test('GET /api/health/ready is 503 not_ready when the database does not answer', async (t) => {
  const app = await buildTestApp(t);
  await app.db.close();
  const res = await app.inject({ method: 'GET', url: '/api/health/ready' });
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'not_ready');
  t.equal(res.headers['retry-after'], '5');
  t.equal(res.json().success, false);
});
