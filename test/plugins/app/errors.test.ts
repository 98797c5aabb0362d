import { type AddressInfo, connect } from 'node:net';
import { setImmediate as nextTick, setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type LightMyRequestResponse } from 'fastify';
import t from 'tap';
import { type App, buildApp } from '../../../app.js';
import errorsPlugin, { notFoundHandler } from '../../../plugins/app/error-handler.js';
import {
  overloadedError,
  AppError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ServiceUnavailableError,
  toErrorResponse,
  UnauthorizedError,
  ValidationError,
  validationDetails,
} from '../../../plugins/app/errors.js';
import { loadConfig } from '../../../config/index.js';
import { bearer, buildTestApp, createTestDatabase, TEST_ENV, tokenFor } from '../../support/app.js';

/** Ids the app generates: a per-process random prefix and a base-36 counter. */
const GENERATED_REQUEST_ID = /^[0-9a-f]{8}-[0-9a-z]+$/;

/**
 * The error model: every failure, whatever raised it, is
 * `{ success: false, error: { code, message, requestId?, details? } }` with the right status, a
 * JSON content type and an x-request-id header. Driven through the real app (inject, or a real
 * socket where Node's HTTP parser answers before Fastify: 408 and 431).
 */

/** The type of a subtest's `t` (tap's root `t` is a TAP, a different class). */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

interface ErrorBody {
  success: false;
  error: { code: string; message: string; requestId?: string; details?: Array<{ path: string; message: string }> };
}

/** Asserts the envelope, its content type and the request id, and returns the body. */
function expectError(t: Test, res: LightMyRequestResponse, status: number, code: string): ErrorBody {
  t.equal(res.statusCode, status, `status ${status}`);
  t.match(res.headers['content-type'], /^application\/json; charset=utf-8$/);
  const body = res.json() as ErrorBody;
  t.same(Object.keys(body).sort(), ['error', 'success'], 'only success and error at the top level');
  t.equal(body.success, false);
  t.equal(body.error.code, code);
  t.type(body.error.message, 'string');
  t.ok(body.error.message.length > 0, 'a message');
  const extra = Object.keys(body.error).filter((key) => !['code', 'message', 'requestId', 'details'].includes(key));
  t.same(extra, [], 'no fields beyond code, message, requestId, details');
  const requestId = res.headers['x-request-id'];
  t.type(requestId, 'string', 'x-request-id header');
  t.equal(body.error.requestId, requestId, 'the body names the request id of the header');
  return body;
}

const app: App = await buildTestApp(t);
const alice = bearer(tokenFor('alice'));
const admin = bearer(tokenFor('root-admin', { role: 'admin' }));

const patchUser = (payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'PATCH', url: '/api/user', headers: { ...alice, ...headers }, payload: payload as string });

t.test('400 validation_failed: bodies are strict, every error reported with its path', async (t) => {
  const ok = await patchUser({ displayName: 'Alice L.' });
  t.equal(ok.statusCode, 200, 'a valid body passes');
  t.equal(ok.json().data.displayName, 'Alice L.');

  const unknown = expectError(
    t,
    await patchUser({ displayName: 'A', extra: 1 }, { 'x-request-id': 'val-1' }),
    400,
    'validation_failed',
  );
  t.equal(unknown.error.requestId, 'val-1');
  t.equal(unknown.error.message, 'The request is not valid.');
  t.same(unknown.error.details, [{ path: '/extra', message: 'is not an accepted field' }]);

  const wrongType = expectError(t, await patchUser({ displayName: 5 }), 400, 'validation_failed');
  t.same(wrongType.error.details, [{ path: '/displayName', message: 'must be string' }], 'no coercion of 5 to "5"');

  const missing = expectError(t, await patchUser({}), 400, 'validation_failed');
  t.same(missing.error.details, [{ path: '/displayName', message: 'is required' }]);

  const blank = expectError(t, await patchUser({ displayName: '   ' }), 400, 'validation_failed');
  t.same(
    blank.error.details?.map((d) => d.path),
    ['/displayName'],
  );

  const notObject = expectError(t, await patchUser([{ displayName: 'A' }]), 400, 'validation_failed');
  t.same(notObject.error.details, [{ path: '/', message: 'must be object' }]);

  const several = expectError(t, await patchUser({ displayName: 5, extra: true, more: 1 }), 400, 'validation_failed');
  const byPath = [...(several.error.details ?? [])].sort((a, b) => a.path.localeCompare(b.path));
  t.same(byPath, [
    { path: '/displayName', message: 'must be string' },
    { path: '/extra', message: 'is not an accepted field' },
    { path: '/more', message: 'is not an accepted field' },
  ]);
});

t.test('400 invalid_json: malformed or empty JSON bodies', async (t) => {
  const json = { 'content-type': 'application/json' };
  const malformed = expectError(t, await patchUser('{"displayName": ', json), 400, 'invalid_json');
  t.equal(malformed.error.message, 'The body is not valid JSON.');
  t.equal(malformed.error.details, undefined);
  const empty = expectError(t, await patchUser('', json), 400, 'invalid_json');
  t.equal(empty.error.message, 'The body is empty but the content type is application/json.');
  // A prototype-poisoning body is refused too, in the same envelope.
  const proto = await patchUser('{"displayName":"x","__proto__":{"isAdmin":true}}', json);
  t.equal(expectError(t, proto, 400, 'invalid_json').error.message, 'The body is not valid JSON.');
});

t.test('path parameters are coerced from text: a numeric-looking id is a string id', async (t) => {
  const numeric = bearer(tokenFor('123', { role: 'admin' }));
  const res = await app.inject({ method: 'GET', url: '/api/admin/users/123', headers: numeric });
  t.equal(res.statusCode, 200);
  t.equal(res.json().data.id, '123');
  const tooLong = await app.inject({ method: 'GET', url: `/api/admin/users/${'x'.repeat(129)}`, headers: admin });
  t.same(expectError(t, tooLong, 400, 'validation_failed').error.details, [
    { path: '/params/userId', message: 'must NOT have more than 128 characters' },
  ]);
});

t.test('401 with a WWW-Authenticate challenge', async (t) => {
  const none = await app.inject({ method: 'GET', url: '/api/user' });
  expectError(t, none, 401, 'missing_credentials');
  t.equal(none.headers['www-authenticate'], 'Bearer realm="api"');

  const forged = await app.inject({
    method: 'GET',
    url: '/api/user',
    headers: bearer(tokenFor('alice', {}, 'z'.repeat(48))),
  });
  expectError(t, forged, 401, 'invalid_token');
  t.match(forged.headers['www-authenticate'], /^Bearer realm="api", error="invalid_token", error_description="[^"]+"$/);
});

t.test('403 forbidden for a signed-in non-admin; 404 for an unknown user', async (t) => {
  const res = await app.inject({ method: 'GET', url: '/api/admin/users/x', headers: alice });
  t.equal(expectError(t, res, 403, 'forbidden').error.message, 'This endpoint is for platform admins.');
  const unknown = await app.inject({ method: 'GET', url: '/api/admin/users/nobody-yet', headers: admin });
  expectError(t, unknown, 404, 'user_not_found');
});

t.test('404 route_not_found for unknown routes, in the envelope', async (t) => {
  const get = expectError(
    t,
    await app.inject({ method: 'GET', url: '/api/nope?token=secret' }),
    404,
    'route_not_found',
  );
  t.equal(get.error.message, 'No route GET /api/nope.', 'the query string is not echoed');
  const post = expectError(
    t,
    await app.inject({ method: 'POST', url: '/api/nope', payload: { a: 1 } }),
    404,
    'route_not_found',
  );
  t.equal(post.error.message, 'No route POST /api/nope.');
  const put = expectError(
    t,
    await app.inject({ method: 'PUT', url: '/api/user', headers: alice }),
    404,
    'route_not_found',
  );
  t.equal(put.error.message, 'No route PUT /api/user.');
  const weird = expectError(
    t,
    await app.inject({ method: 'GET', url: '/api/100%25off/%7Bx%7D' }),
    404,
    'route_not_found',
  );
  t.equal(weird.error.message, 'No route GET /api/100%25off/%7Bx%7D.');
  const outside = await app.inject({ method: 'GET', url: '/nowhere' });
  expectError(t, outside, 404, 'route_not_found');
});

t.test("a bad percent-encoding is a 400 bad_request envelope, not Fastify's default body", async (t) => {
  for (const url of ['/api/%E0%A4%A', '/api/50%', '/api/admin/users/%E0%A4%A']) {
    const res = await app.inject({ method: 'GET', url, headers: { 'x-request-id': 'bad-url-1' } });
    t.equal(res.statusCode, 400, url);
    t.match(res.headers['content-type'], /^application\/json/);
    t.same(res.json(), {
      success: false,
      error: { code: 'bad_request', message: 'The URL is not valid.', requestId: 'bad-url-1' },
    });
  }
});

t.test('414 uri_too_long for an over-long path parameter, in the envelope', async (t) => {
  const res = await app.inject({
    method: 'GET',
    url: `/api/admin/users/${'x'.repeat(300)}`,
    headers: { 'x-request-id': 'long-1' },
  });
  t.equal(res.statusCode, 414);
  t.match(res.headers['content-type'], /^application\/json/);
  t.same(res.json(), {
    success: false,
    error: { code: 'uri_too_long', message: 'A path parameter is too long.', requestId: 'long-1' },
  });
});

t.test('router-level 400/414 answers carry x-request-id, equal to error.requestId', async (t) => {
  const res = await app.inject({ method: 'GET', url: '/api/%E0%A4%A', headers: { 'x-request-id': 'bad-url-2' } });
  t.equal(res.statusCode, 400);
  t.equal(res.headers['x-request-id'], 'bad-url-2');
  t.equal(expectError(t, res, 400, 'bad_request').error.requestId, 'bad-url-2');
  const long = await app.inject({
    method: 'GET',
    url: `/api/admin/users/${'x'.repeat(300)}`,
    headers: { 'x-request-id': 'long-2' },
  });
  t.equal(long.statusCode, 414);
  t.equal(long.headers['x-request-id'], 'long-2');
  t.equal(expectError(t, long, 414, 'uri_too_long').error.requestId, 'long-2');

  // Without a usable x-request-id the id is generated, and still the same in header and body.
  for (const headers of [{}, { 'x-request-id': 'has spaces and {braces}' }]) {
    const bad = await app.inject({ method: 'GET', url: '/api/50%', headers });
    const body = expectError(t, bad, 400, 'bad_request');
    t.match(body.error.requestId, GENERATED_REQUEST_ID, 'a generated id');
    const tooLong = await app.inject({ method: 'GET', url: `/api/admin/users/${'y'.repeat(300)}`, headers });
    t.match(expectError(t, tooLong, 414, 'uri_too_long').error.requestId, GENERATED_REQUEST_ID);
    t.not(tooLong.headers['x-request-id'], bad.headers['x-request-id'], 'one id per request');
  }
});

t.test('413 payload_too_large over BODY_LIMIT', async (t) => {
  const small = await buildTestApp(t, { BODY_LIMIT: '100' });
  const patch = (displayName: string) =>
    small.inject({ method: 'PATCH', url: '/api/user', headers: alice, payload: { displayName } });
  const fits = await patch('x'.repeat(60)); // 78 bytes of JSON
  t.equal(fits.statusCode, 200, 'a body under the limit passes');
  const res = await patch('x'.repeat(200));
  t.equal(expectError(t, res, 413, 'payload_too_large').error.message, 'The request body is too large.');
});

t.test('415 unsupported_media_type for a non-JSON body', async (t) => {
  for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
    const res = await patchUser('displayName=A', { 'content-type': type });
    t.equal(
      expectError(t, res, 415, 'unsupported_media_type').error.message,
      'The request body must be sent as application/json.',
      type,
    );
  }
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  elapsedMs: number;
}

/**
 * Writes `data` on a fresh socket and reads until the server closes it (or `waitMs` pass). With
 * `drip`, one more byte of it follows every 100 ms, so the connection is never idle.
 */
function rawRequest(port: number, data: string, waitMs = 3000, drip?: string): Promise<RawResponse | undefined> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const dripping = drip ? setInterval(() => socket.writable && socket.write(drip), 100) : undefined;
    const finish = () => {
      clearTimeout(timer);
      clearInterval(dripping);
      socket.destroy();
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
      if (!status) return resolve(undefined);
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status, headers, body: rest.join('\r\n\r\n'), elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(finish, waitMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('close', finish);
    socket.on('error', () => {});
    socket.write(data);
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The raw envelope Node's parser errors get: no Fastify request exists, so the id is generated on
 * the spot (a UUID), sent as x-request-id and repeated as error.requestId. Returns that id.
 */
function expectRawError(
  t: Test,
  res: RawResponse | undefined,
  status: number,
  code: string,
  message: string,
): string | undefined {
  if (!res) {
    t.fail(`no HTTP response (expected ${status})`);
    return undefined;
  }
  t.equal(res.status, status);
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(res.headers.connection, 'close');
  t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body));
  const requestId = res.headers['x-request-id'];
  t.match(requestId, UUID, 'x-request-id is a generated UUID');
  t.same(
    JSON.parse(res.body),
    { success: false, error: { code, message, requestId } },
    'the envelope, with the same id',
  );
  return requestId;
}

t.test("a real server answers what Node's parser refuses in the envelope (408, 431)", async (t) => {
  const listening = await buildTestApp(t, { REQUEST_TIMEOUT: '500 ms' });
  await listening.listen({ port: 0, host: '127.0.0.1' });
  const port = (listening.server.address() as AddressInfo).port;

  await t.test('408 request_timeout: a request head that never completes', async (t) => {
    const res = await rawRequest(port, 'GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ', 3000);
    expectRawError(t, res, 408, 'request_timeout', 'The request took too long to arrive.');
    t.ok(
      res && res.elapsedMs >= 400 && res.elapsedMs < 10_000,
      `answered after the 500 ms timeout, not the 30 s default (${res?.elapsedMs} ms)`,
    );
    // The server still answers normal requests.
    const ok = await rawRequest(port, 'GET /api/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    t.equal(ok?.status, 200);
  });

  await t.test('408 request_timeout: a body that never completes', async (t) => {
    const head =
      `PATCH /api/user HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${tokenFor('slow-body')}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"displayName"';
    const res = await rawRequest(port, head, 3000);
    expectRawError(t, res, 408, 'request_timeout', 'The request took too long to arrive.');
    t.ok(
      res && res.elapsedMs >= 400 && res.elapsedMs < 10_000,
      `answered after the 500 ms timeout, not the 30 s default (${res?.elapsedMs} ms)`,
    );
  });

  await t.test('408 request_timeout: a body that keeps trickling past REQUEST_TIMEOUT', async (t) => {
    const head =
      `PATCH /api/user HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${tokenFor('trickle')}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{"displayName":"';
    const res = await rawRequest(port, head, 4000, 'x');
    expectRawError(t, res, 408, 'request_timeout', 'The request took too long to arrive.');
    t.ok(
      res && res.elapsedMs >= 400 && res.elapsedMs < 10_000,
      `answered after the 500 ms timeout, not the 30 s default (${res?.elapsedMs} ms)`,
    );
  });

  await t.test('431 headers_too_large over 16 KiB of headers', async (t) => {
    const big = await rawRequest(
      port,
      `GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`,
    );
    expectRawError(t, big, 431, 'headers_too_large', 'The request headers are too large.');
    const fits = await rawRequest(
      port,
      `GET /api/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Big: ${'a'.repeat(15 * 1024)}\r\n\r\n`,
    );
    t.equal(fits?.status, 200, 'a 15 KiB header is accepted');
  });

  await t.test('socket-level 408/431 answers carry x-request-id like every other response', async (t) => {
    const big = `GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: mine-1\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`;
    const [first, second, slow] = await Promise.all([
      rawRequest(port, big),
      rawRequest(port, big),
      rawRequest(port, 'GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: mine-2\r\nX-Slow: ', 3000),
    ]);
    const ids = [
      expectRawError(t, first, 431, 'headers_too_large', 'The request headers are too large.'),
      expectRawError(t, second, 431, 'headers_too_large', 'The request headers are too large.'),
      expectRawError(t, slow, 408, 'request_timeout', 'The request took too long to arrive.'),
    ];
    t.equal(new Set(ids).size, 3, 'a fresh id for every answer (the unparsed X-Request-Id is not used)');
  });
});

t.test('500 internal_error hides the cause; 503 not_ready when the database is gone', async (t) => {
  const broken = await buildTestApp(t);
  const before = await broken.inject({ method: 'GET', url: '/api/user', headers: alice });
  t.equal(before.statusCode, 200, 'works while the database is open');
  await broken.db.close();

  const res = await broken.inject({
    method: 'GET',
    url: '/api/user',
    headers: { ...bearer(tokenFor('brand-new-subject')), 'x-request-id': 'boom-1' },
  });
  const body = expectError(t, res, 500, 'internal_error');
  t.equal(res.headers['x-request-id'], 'boom-1');
  t.equal(body.error.requestId, 'boom-1');
  t.same(body, {
    success: false,
    error: {
      code: 'internal_error',
      message: 'Something went wrong on our side. The request id helps us find it.',
      requestId: 'boom-1',
    },
  });
  for (const leak of [/select/i, /insert/i, /from "?users/i, /stack/i, /\.ts:\d+/, /pglite/i, /pool/i, /closed/i]) {
    t.notMatch(res.body, leak, `no ${leak} in the body`);
  }

  const ready = await broken.inject({ method: 'GET', url: '/api/health/ready' });
  t.equal(expectError(t, ready, 503, 'not_ready').error.message, 'The database is not answering.');
  t.equal(ready.headers['retry-after'], '5');
});

/** Blocks the event loop in 300 ms slices (with a turn of the loop between) for `totalMs`. */
async function busy(totalMs: number): Promise<void> {
  const end = Date.now() + totalMs;
  while (Date.now() < end) {
    const sliceEnd = Date.now() + 300;
    while (Date.now() < sliceEnd) {
      // spin
    }
    await nextTick();
  }
}

/** Polls GET /api/health every 100 ms until `status` or `withinMs`; returns the last response. */
async function pollHealth(target: App, status: number, withinMs: number): Promise<LightMyRequestResponse> {
  const end = Date.now() + withinMs;
  let res = await target.inject({ method: 'GET', url: '/api/health' });
  while (res.statusCode !== status && Date.now() < end) {
    await sleep(100);
    res = await target.inject({ method: 'GET', url: '/api/health' });
  }
  return res;
}

t.test('503 overloaded when the event loop lags over MAX_EVENT_LOOP_DELAY', async (t) => {
  const pressured = await buildTestApp(t, { MAX_EVENT_LOOP_DELAY: '20 ms' });
  // Start from a calm loop (building the app may itself have lagged it).
  t.equal((await pollHealth(pressured, 200, 3000)).statusCode, 200, 'healthy before the load');

  // under-pressure compares the MEAN loop delay over its 1 s sample with the limit: a single 300 ms
  // stall averages to ~5 ms and does not trip 20 ms, so keep the loop saturated for 1.5 s.
  await busy(1500);
  const res = await pollHealth(pressured, 503, 2000);
  const body = expectError(t, res, 503, 'overloaded');
  t.equal(body.error.message, 'The service is overloaded; try again shortly.');
  t.equal(res.headers['retry-after'], '5');

  t.equal((await pollHealth(pressured, 200, 4000)).statusCode, 200, 'recovers once the loop is calm');
});

t.test('past CATALOG_MAX_EVENT_LOOP_DELAY the public catalog waits 100 ms; other routes do not', async (t) => {
  const pressured = await buildTestApp(t, {
    MAX_EVENT_LOOP_DELAY: '10 seconds',
    CATALOG_MAX_EVENT_LOOP_DELAY: '20 ms',
  });
  const timed = async (url: string) => {
    const started = performance.now();
    const res = await pressured.inject({ method: 'GET', url });
    return { status: res.statusCode, ms: performance.now() - started };
  };
  // Cached first, so no read below waits for the database; compared with a health check made
  // beside it, so a busy machine slowing both does not count.
  await timed('/api/packs');
  // The loop's mean delay is sampled each second, and building the app (or tests running beside
  // this one) can lag it: wait for a calm sample, and allow a few tries for the machine's noise.
  let calmGap = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < 5 && calmGap >= 90; attempt++) {
    const end = Date.now() + 5000;
    while (pressured.isUnderPressure() && Date.now() < end) await sleep(50);
    const calm = await Promise.all([timed('/api/packs'), timed('/api/health')]);
    calmGap = calm[0].ms - calm[1].ms;
  }
  t.ok(calmGap < 90, `a calm loop answers the catalog at once (${Math.round(calmGap)} ms behind health)`);
  await busy(1500);
  const [catalog, health] = await Promise.all([timed('/api/packs'), timed('/api/health')]);
  t.equal(catalog.status, 200, 'the catalog is still answered');
  t.ok(catalog.ms >= 100, `after a 100 ms wait (${Math.round(catalog.ms)} ms)`);
  t.equal(health.status, 200);
  t.ok(catalog.ms - health.ms >= 50, `a route outside the catalog is not held (${Math.round(health.ms)} ms)`);
});

t.test('toErrorResponse maps every kind of failure (pure)', async (t) => {
  const conflict = toErrorResponse(
    new ConflictError('sold_out', 'Sold out.', [{ path: '/quantity', message: 'too many' }]),
    'r-1',
  );
  t.same(conflict, {
    statusCode: 409,
    body: {
      success: false,
      error: {
        code: 'sold_out',
        message: 'Sold out.',
        details: [{ path: '/quantity', message: 'too many' }],
        requestId: 'r-1',
      },
    },
    headers: {},
    internal: false,
  });

  const noId = toErrorResponse(new AppError(418, 'teapot', 'I am a teapot.'));
  t.same(
    noId.body,
    { success: false, error: { code: 'teapot', message: 'I am a teapot.' } },
    'no requestId key without an id',
  );
  t.equal(noId.statusCode, 418);

  t.same(toErrorResponse(new UnauthorizedError('missing_credentials', 'Needs a token.')).headers, {
    'www-authenticate': 'Bearer realm="api"',
  });
  t.same(toErrorResponse(new UnauthorizedError('invalid_token', 'Bad "sig".')).headers, {
    'www-authenticate': `Bearer realm="api", error="invalid_token", error_description="Bad 'sig'."`,
  });
  t.equal(toErrorResponse(new ForbiddenError()).body.error.code, 'forbidden');
  t.equal(toErrorResponse(new NotFoundError('pack_not_found', 'No pack.')).statusCode, 404);
  t.same(toErrorResponse(new ValidationError('Bad cursor.', undefined, 'invalid_cursor')).body.error, {
    code: 'invalid_cursor',
    message: 'Bad cursor.',
  });
  const unavailable = toErrorResponse(new ServiceUnavailableError('not_ready', 'Down.', 7));
  t.equal(unavailable.statusCode, 503);
  t.same(unavailable.headers, { 'retry-after': '7' });
  t.same(toErrorResponse(new ServiceUnavailableError('x', 'Down.')).headers, {});
  // The pool's refusal reaches the handler wrapped in drizzle's query error.
  const wrapped = toErrorResponse(new Error('Failed query: select 1', { cause: overloadedError(1) }));
  t.equal(wrapped.statusCode, 503);
  t.equal(wrapped.body.error.code, 'overloaded');
  t.same(wrapped.headers, { 'retry-after': '1' });

  const generic = 'Something went wrong on our side. The request id helps us find it.';
  for (const unknown of [
    new Error('select * from "users" where id = $1'),
    new TypeError('Cannot read properties of undefined'),
    'a string',
    42,
    { statusCode: 502, message: 'upstream' },
  ]) {
    const response = toErrorResponse(unknown, 'r-2');
    t.same(
      response,
      {
        statusCode: 500,
        body: { success: false, error: { code: 'internal_error', message: generic, requestId: 'r-2' } },
        headers: {},
        internal: true,
      },
      String(unknown),
    );
  }

  const tooLarge = toErrorResponse({
    code: 'FST_ERR_CTP_BODY_TOO_LARGE',
    statusCode: 413,
    message: 'Request body is too large',
  });
  t.same(tooLarge, {
    statusCode: 413,
    body: { success: false, error: { code: 'payload_too_large', message: 'The request body is too large.' } },
    headers: {},
    internal: false,
  });
  t.equal(toErrorResponse({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }).statusCode, 415);
  t.equal(toErrorResponse({ code: 'FST_ERR_MAX_PARAM_LENGTH', statusCode: 414 }).statusCode, 414);

  const limited = toErrorResponse({ statusCode: 429, message: 'Too many requests: the limit is 3 per 1 minute.' });
  t.same(limited.body.error, { code: 'rate_limited', message: 'Too many requests: the limit is 3 per 1 minute.' });
  t.equal(limited.statusCode, 429);
  t.equal(toErrorResponse({ statusCode: 429 }).body.error.message, 'Too many requests; slow down.');

  const pluginUnavailable = toErrorResponse({ statusCode: 503, message: 'internal detail' });
  t.same(pluginUnavailable.body.error, {
    code: 'service_unavailable',
    message: 'The service is overloaded; try again shortly.',
  });
  t.same(pluginUnavailable.headers, { 'retry-after': '5' });

  const multiLine = toErrorResponse({ statusCode: 400, message: 'Bad header value\n    at secret (/srv/app.js:1:1)' });
  t.same(multiLine.body.error, { code: 'bad_request', message: 'Bad header value' }, 'cut to its first line');
  t.equal(toErrorResponse({ statusCode: 400, message: 'x'.repeat(300) }).body.error.message, 'x'.repeat(200));
  t.equal(
    toErrorResponse({ statusCode: 400, message: '\nonly later' }).body.error.message,
    'The request could not be processed.',
  );
  t.equal(toErrorResponse({ statusCode: 404, message: 'gone' }).body.error.code, 'not_found');
  t.equal(toErrorResponse({ statusCode: 408, message: 'slow' }).body.error.code, 'request_timeout');
  t.equal(toErrorResponse({ statusCode: 409, message: 'x' }).body.error.code, 'bad_request');

  const validation = toErrorResponse({
    validation: [{ instancePath: '/limit', keyword: 'maximum', message: 'must be <= 200', params: {} }],
    validationContext: 'querystring',
    statusCode: 400,
  });
  t.same(validation.body.error, {
    code: 'validation_failed',
    message: 'The request is not valid.',
    details: [{ path: '/querystring/limit', message: 'must be <= 200' }],
  });
});

t.test('a null or undefined rejection is a 500 in the envelope too', async (t) => {
  const generic = 'Something went wrong on our side. The request id helps us find it.';
  for (const value of [null, undefined]) {
    t.same(
      toErrorResponse(value, 'r-3'),
      {
        statusCode: 500,
        body: { success: false, error: { code: 'internal_error', message: generic, requestId: 'r-3' } },
        headers: {},
        internal: true,
      },
      `toErrorResponse(${value})`,
    );
    t.same(
      toErrorResponse(value).body,
      { success: false, error: { code: 'internal_error', message: generic } },
      `${value} without an id`,
    );
  }

  // Through the real app: a handler and a hook that reject with null / undefined.
  const database = await createTestDatabase();
  const real = await buildApp(loadConfig({ ...TEST_ENV, DATABASE_URL: database.url }));
  t.teardown(async () => {
    await real.close();
    await database.drop();
  });
  const misc = { tags: ['Misc'], summary: 'throws nothing useful' };
  real.get('/api/test/throws-null', { config: { auth: 'public' }, schema: misc }, async () => {
    throw null;
  });
  real.get('/api/test/rejects-undefined', { config: { auth: 'public' }, schema: misc }, () =>
    Promise.reject(undefined),
  );
  real.get(
    '/api/test/hook-throws-null',
    {
      config: { auth: 'public' },
      schema: misc,
      preHandler: async () => {
        throw null;
      },
    },
    async () => 'unreachable',
  );
  real.get(
    '/api/test/hook-rejects-undefined',
    { config: { auth: 'public' }, schema: misc, onRequest: () => Promise.reject(undefined) },
    async () => 'unreachable',
  );
  await real.ready();
  for (const url of [
    '/api/test/throws-null',
    '/api/test/rejects-undefined',
    '/api/test/hook-throws-null',
    '/api/test/hook-rejects-undefined',
  ]) {
    const res = await real.inject({ method: 'GET', url, headers: { 'x-request-id': 'nil-1' } });
    const body = expectError(t, res, 500, 'internal_error');
    // Exactly the generic envelope: no TypeError text, no FST_ERR_* code.
    t.same(body, { success: false, error: { code: 'internal_error', message: generic, requestId: 'nil-1' } }, url);
  }

  // And through the plugin alone, as before.
  const bare = Fastify({ logger: false });
  t.teardown(() => bare.close());
  await bare.register(errorsPlugin);
  bare.get('/null', { schema: { tags: ['Misc'], summary: 'throws null' } }, async () => {
    throw null;
  });
  const res = await bare.inject({ method: 'GET', url: '/null' });
  t.equal(res.statusCode, 500);
  t.match(res.json(), { success: false, error: { code: 'internal_error', message: generic } });
  t.equal(res.json().error.requestId, res.headers['x-request-id'], 'sendError sets the header even without app.ts');
  t.notMatch(res.body, /validation|TypeError/);
});

t.test('validationDetails names the field (pure)', async (t) => {
  t.same(
    validationDetails(
      [
        {
          instancePath: '',
          keyword: 'required',
          params: { missingProperty: 'name' },
          message: "must have required property 'name'",
        },
        {
          instancePath: '/items/0',
          keyword: 'additionalProperties',
          params: { additionalProperty: 'x' },
          message: 'must NOT have additional properties',
        },
        { instancePath: '/quantity', keyword: 'type', params: { type: 'integer' }, message: 'must be integer' },
        { instancePath: '', keyword: 'type', message: 'must be object' },
        { keyword: 'something' },
      ],
      'body',
    ),
    [
      { path: '/name', message: 'is required' },
      { path: '/items/0/x', message: 'is not an accepted field' },
      { path: '/quantity', message: 'must be integer' },
      { path: '/', message: 'must be object' },
      { path: '/', message: 'is invalid' },
    ],
  );
  t.same(validationDetails([{ instancePath: '/userId', keyword: 'maxLength', message: 'too long' }], 'params'), [
    { path: '/params/userId', message: 'too long' },
  ]);
  t.same(
    validationDetails(
      [{ instancePath: '', keyword: 'required', params: { missingProperty: 'cursor' } }],
      'querystring',
    ),
    [{ path: '/querystring/cursor', message: 'is required' }],
  );
  t.same(validationDetails([{ instancePath: '/a', message: 'bad' }], undefined), [{ path: '/a', message: 'bad' }]);
  t.same(validationDetails([], 'body'), []);
});

interface OpenApiOperation {
  responses: Record<string, { description?: string; content?: Record<string, { schema: Record<string, unknown> }> }>;
}

t.test('the OpenAPI document declares the error responses each route can give', async (t) => {
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, OpenApiOperation>> };
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort();

  const declares = (path: string, method: string, expected: string[]) => {
    const declared = statuses(path, method);
    for (const status of expected)
      t.ok(declared.includes(status), `${method.toUpperCase()} ${path} declares ${status}`);
  };
  declares('/api/user', 'patch', ['200', '400', '401', '413', '415', '429', '500', '503']);
  // 400 everywhere: any URL can be badly encoded, and any query string can hold a NUL.
  declares('/api/user', 'get', ['200', '400', '401', '429', '500', '503']);
  declares('/api/health', 'get', ['200', '400', '500', '503']);
  declares('/api/admin/users/{userId}', 'get', ['200', '400', '401', '403', '404', '429', '500', '503']);
  for (const status of ['403', '413', '414', '415']) {
    t.notOk(
      statuses('/api/user', 'get').includes(status),
      `GET /api/user (no body, no path parameter, any user) does not declare ${status}`,
    );
  }
  t.notOk(statuses('/api/user', 'patch').includes('403'), 'PATCH /api/user is for any user: no 403');
  t.notOk(statuses('/api/health', 'get').includes('401'), 'public, no 401');
  t.ok(statuses('/api/health/ready', 'get').includes('503'));

  // Each error status is one shared response, with the envelope and an example of that status.
  t.same(doc.paths['/api/user']?.patch?.responses['415'], { $ref: '#/components/responses/UnsupportedMediaType' });
  const components = (
    doc as unknown as {
      components: {
        responses: Record<string, OpenApiOperation['responses'][string]>;
        schemas: Record<string, unknown>;
      };
    }
  ).components;
  const error = components.responses.UnsupportedMediaType;
  t.match(error?.description, /^Unsupported content type/);
  t.same(error?.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' });
  const schema = components.schemas.Error as {
    required: string[];
    properties: {
      success: { enum?: unknown[]; const?: unknown };
      error: { required: string[]; properties: Record<string, unknown> };
    };
  };
  t.same(schema.required.sort(), ['error', 'success']);
  t.same(schema.properties.success.enum ?? [schema.properties.success.const], [false], 'success is false');
  t.same(schema.properties.error.required.sort(), ['code', 'message']);
  t.same(Object.keys(schema.properties.error.properties).sort(), ['code', 'details', 'message', 'requestId']);
});

t.test('routes exempt from rate limiting do not declare 429; the others do', async (t) => {
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, OpenApiOperation>> };
  for (const path of ['/api/health', '/api/health/ready']) {
    const responses = doc.paths[path]?.get?.responses;
    t.ok(responses, `GET ${path} is documented`);
    t.notOk('429' in (responses ?? {}), `GET ${path} (config.rateLimit: false) does not declare 429`);
    t.ok('500' in (responses ?? {}) && '503' in (responses ?? {}), `GET ${path} still declares 500 and 503`);
  }
  for (const [path, method] of [
    ['/api/user', 'get'],
    ['/api/user', 'patch'],
    ['/api/admin/users/{userId}', 'get'],
  ] as const) {
    t.ok(
      '429' in (doc.paths[path]?.[method]?.responses ?? {}),
      `${method.toUpperCase()} ${path} (rate limited) declares 429`,
    );
  }

  // The rule follows the route's own config, not its path.
  const bare = Fastify();
  t.teardown(() => bare.close());
  await bare.register(errorsPlugin);
  const schema = { tags: ['Misc'], summary: 'x' };
  const seen: Record<string, string[]> = {};
  bare.addHook('onRoute', (route) => {
    seen[route.url] = Object.keys((route.schema as { response?: object } | undefined)?.response ?? {});
  });
  bare.get('/exempt', { schema, config: { rateLimit: false } as object }, async () => 'x');
  bare.get('/custom', { schema, config: { rateLimit: { max: 1 } } as object }, async () => 'x');
  bare.get('/plain', { schema }, async () => 'x');
  await bare.ready();
  t.notOk(seen['/exempt']?.includes('429'), 'rateLimit: false → no 429');
  t.ok(seen['/custom']?.includes('429'), 'a route-specific limit → 429');
  t.ok(seen['/plain']?.includes('429'), 'the global limit → 429');
});

t.test('a documented route needs tags and a summary; hidden routes are left alone', async (t) => {
  const bare = Fastify();
  t.teardown(() => bare.close());
  await bare.register(errorsPlugin);
  t.throws(() => bare.get('/undocumented', async () => 'x'), {
    message: 'Route GET /undocumented needs schema.tags and schema.summary',
  });
  t.throws(() => bare.get('/no-summary', { schema: { tags: ['Misc'] } }, async () => 'x'), {
    message: /needs schema\.tags and schema\.summary/,
  });
  bare.get('/hidden', { schema: { hide: true } as object }, async () => 'hidden');
  bare.get('/documented', { schema: { tags: ['Misc'], summary: 'ok' } }, async () => {
    throw new ConflictError('state_conflict', 'No.');
  });
  // The 404 handler is installed by app.ts (behind the rate limit); the plugin exports it.
  bare.setNotFoundHandler(notFoundHandler);
  await bare.ready();
  t.equal((await bare.inject({ method: 'GET', url: '/hidden' })).body, 'hidden');
  const res = await bare.inject({ method: 'GET', url: '/documented' });
  t.equal(res.statusCode, 409);
  t.match(res.json(), { success: false, error: { code: 'state_conflict', message: 'No.', requestId: /^req-\d+$/ } });
  const missing = await bare.inject({ method: 'GET', url: '/missing?secret=1' });
  t.equal(missing.statusCode, 404);
  t.same(missing.json(), {
    success: false,
    error: { code: 'route_not_found', message: 'No route GET /missing.', requestId: missing.headers['x-request-id'] },
  });
});
