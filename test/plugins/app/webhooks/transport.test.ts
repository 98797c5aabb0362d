import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, type LookupFunction, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { newSigningSecret, webhookHeaders } from '../../../../plugins/app/webhooks/signing.js';
import type { ResolvedAddress } from '../../../../plugins/app/webhooks/ssrf.js';
import {
  pinnedLookup,
  RESPONSE_BODY_LIMIT,
  sendWebhook,
  PLAIN_HTTP_RULE,
  targetUrlProblem,
} from '../../../../plugins/app/webhooks/transport.js';

// Delivery attempts against receivers on loopback addresses of this machine (allowPrivate on),
// and the guard with allowPrivate off. Names are answered by stub resolvers: no DNS query, and no
// connection to any address but loopback (the one test that checks a public address stops the
// socket before it connects).

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  port: number;
  received: Received[];
  connections: () => number;
}

/** An HTTP server on a loopback address; `handle` answers (or not) once the request body is in. */
async function receiver(
  t: Test,
  handle: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => response.end(),
  host = '127.0.0.1',
  port = 0,
): Promise<Receiver> {
  const received: Received[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      handle(request, response);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const actual = (server.address() as AddressInfo).port;
  return { url: `http://${host}:${actual}`, port: actual, received, connections: () => connections };
}

/** A resolver that answers each call with the next of `answers` (the last one over and over). */
function resolverOf(...answers: string[][]) {
  let calls = 0;
  const resolve = async (_host: string): Promise<ResolvedAddress[]> => {
    const answer = answers[Math.min(calls, answers.length - 1)] ?? [];
    calls++;
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, calls: () => calls };
}

const now = () => Math.floor(Date.now() / 1000);
const BODY = JSON.stringify({ type: 'pack.opened', timestamp: '2026-11-27T03:00:00.000Z', data: { packId: 'p1' } });
const LOCAL = { allowPrivate: true };

t.test('delivered: a 2xx, with the body and the signed headers as given', async (t) => {
  const secret = newSigningSecret();
  const target = await receiver(t, (_request, response) => response.writeHead(200).end('thanks'));
  const headers = webhookHeaders([secret], 'evt_1', now(), BODY);
  const result = await sendWebhook({ url: `${target.url}/hooks/in?team=7`, headers, body: BODY }, LOCAL);
  t.match(result, { outcome: 'delivered', status: 200, error: null, address: '127.0.0.1', responseBody: 'thanks' });
  t.ok(result.durationMs >= 0 && result.durationMs < 5000, `took ${result.durationMs} ms`);

  t.equal(target.received.length, 1);
  const [request] = target.received;
  t.equal(request?.method, 'POST');
  t.equal(request?.url, '/hooks/in?team=7');
  t.equal(request?.body, BODY);
  t.equal(request?.headers['content-length'], String(Buffer.byteLength(BODY)));
  t.equal(request?.headers.host, `127.0.0.1:${target.port}`);
  t.equal(request?.headers['content-type'], 'application/json');
  t.same(new Webhook(secret).verify(request?.body ?? '', request?.headers as Record<string, string>), JSON.parse(BODY));

  for (const status of [201, 202, 204, 299]) {
    const other = await receiver(t, (_request, response) => response.writeHead(status).end());
    t.match(await sendWebhook({ url: other.url, headers: {}, body: BODY }, LOCAL), { outcome: 'delivered', status });
  }
});

t.test('a receiver error fails; 410 is gone', async (t) => {
  for (const [status, outcome] of [
    [500, 'failed'],
    [503, 'failed'],
    [400, 'failed'],
    [404, 'failed'],
    [429, 'failed'],
    [410, 'gone'],
  ] as const) {
    const target = await receiver(t, (_request, response) => response.writeHead(status).end('{"error":"nope"}'));
    const result = await sendWebhook({ url: target.url, headers: {}, body: BODY }, LOCAL);
    t.match(result, { outcome, status, error: `HTTP ${status}`, responseBody: '{"error":"nope"}' }, `${status}`);
    t.equal(target.received.length, 1);
  }
});

t.test('the response body kept is text PostgreSQL can store', async (t) => {
  const target = await receiver(t, (_request, response) =>
    response.writeHead(500).end(Buffer.concat([Buffer.from('bad\0'), Buffer.from([0xff, 0xfe]), Buffer.from('!')])),
  );
  const result = await sendWebhook({ url: target.url, headers: {}, body: BODY }, LOCAL);
  t.equal(result.responseBody, 'bad\ufffd\ufffd!', 'no NUL, invalid UTF-8 replaced');
});

t.test('a redirect fails with its status and is not followed', async (t) => {
  const elsewhere = await receiver(t);
  for (const status of [301, 302, 303, 307, 308]) {
    const target = await receiver(t, (_request, response) =>
      response.writeHead(status, { location: `${elsewhere.url}/stolen` }).end(),
    );
    const result = await sendWebhook({ url: target.url, headers: {}, body: BODY }, LOCAL);
    t.match(result, { outcome: 'failed', status, error: `redirect not followed (HTTP ${status})` }, `${status}`);
  }
  t.equal(elsewhere.connections(), 0, 'the redirect target saw no connection');
  t.equal(elsewhere.received.length, 0);
});

t.test('a receiver that never answers: the attempt times out and hangs up', async (t) => {
  let hungUp: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    hungUp = resolve;
  });
  const target = await receiver(t, (request) => request.socket.once('close', () => hungUp()));
  const result = await sendWebhook({ url: target.url, headers: {}, body: BODY }, { ...LOCAL, timeoutMs: 300 });
  t.match(result, { outcome: 'failed', status: null, error: 'timeout', address: '127.0.0.1' });
  t.ok(result.durationMs >= 250 && result.durationMs < 5000, `gave up after ${result.durationMs} ms`);
  await closed;
  t.pass('the receiver saw the connection closed');
});

t.test('a name that never resolves times out too', async (t) => {
  const resolve = () => new Promise<ResolvedAddress[]>(() => {});
  const result = await sendWebhook(
    { url: 'https://slow-dns.example/', headers: {}, body: BODY },
    { allowPrivate: false, resolve, timeoutMs: 200 },
  );
  t.match(result, { outcome: 'failed', error: 'timeout', address: null });
});

t.test('headers then silence: delivered with what came before the deadline', async (t) => {
  const target = await receiver(t, (_request, response) => {
    response.writeHead(202);
    response.write('accepted, still');
  });
  const result = await sendWebhook({ url: target.url, headers: {}, body: BODY }, { ...LOCAL, timeoutMs: 400 });
  t.match(result, { outcome: 'delivered', status: 202, responseBody: 'accepted, still', error: null });
  t.ok(result.durationMs < 5000);
});

t.test('a huge response body is cut off after the first KiB', async (t) => {
  const TOTAL = 64 * 1024 * 1024;
  let written = 0;
  let finished = false;
  let responseClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    responseClosed = resolve;
  });
  const target = await receiver(t, (_request, response) => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    response.on('finish', () => {
      finished = true;
    });
    response.on('close', () => responseClosed());
    response.writeHead(200, { 'content-length': String(TOTAL) });
    const pump = () => {
      while (written < TOTAL) {
        written += chunk.length;
        if (!response.write(chunk)) {
          response.once('drain', pump);
          return;
        }
      }
      response.end();
    };
    pump();
  });
  const result = await sendWebhook({ url: target.url, headers: {}, body: BODY }, LOCAL);
  t.match(result, { outcome: 'delivered', status: 200 });
  t.equal(result.responseBody, 'x'.repeat(RESPONSE_BODY_LIMIT), 'the first KiB is kept');
  await closed;
  t.notOk(finished, 'the receiver could not send it all');
  t.ok(written < TOTAL, `the receiver got ${written} bytes out of ${TOTAL} before the hang-up`);
});

t.test('a connection refused, and an aborted attempt, fail', async (t) => {
  const silent = await receiver(t, () => {});
  // The receiver listens on 127.0.0.1 only: nothing listens on 127.0.0.3 at its port.
  const refused = await sendWebhook({ url: `http://127.0.0.3:${silent.port}/`, headers: {}, body: BODY }, LOCAL);
  t.match(refused, { outcome: 'failed', status: null, error: /ECONNREFUSED/, address: '127.0.0.3' });

  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const aborted = await sendWebhook(
    { url: silent.url, headers: {}, body: BODY },
    { ...LOCAL, signal: controller.signal },
  );
  t.match(aborted, { outcome: 'failed', error: 'aborted' });
  t.ok(aborted.durationMs < 5000);
});

t.test('refused targets: nothing is connected to', async (t) => {
  const target = await receiver(t);
  const guarded = { allowPrivate: false };
  const cases: [string, RegExp][] = [
    [`https://127.0.0.1:${target.port}/`, /refused address \(loopback\)/],
    [`https://[::ffff:127.0.0.1]:${target.port}/`, /refused address \(ipv4-mapped loopback\)/],
    [`https://2130706433:${target.port}/`, /refused address \(loopback\)/],
    [`${target.url}/`, /must be https/],
    ['https://user:secret@hooks.example/', /user name or password/],
    ['ftp://hooks.example/', /must be https/],
    ['not a url', /not a URL/],
  ];
  for (const [url, error] of cases) {
    const { resolve, calls } = resolverOf(['8.8.8.8']);
    const result = await sendWebhook({ url, headers: {}, body: BODY }, { ...guarded, resolve });
    t.match(result, { outcome: 'refused', status: null, error }, url);
    t.equal(calls(), 0, `${url}: not even resolved`);
  }
  for (const [answers, reason, address] of [
    [['127.0.0.1'], 'loopback', '127.0.0.1'],
    [['10.0.0.7'], 'private', '10.0.0.7'],
    [['8.8.8.8', '127.0.0.1'], 'loopback', '127.0.0.1'],
    [['::ffff:7f00:1'], 'ipv4-mapped loopback', '::ffff:7f00:1'],
  ] as const) {
    const { resolve } = resolverOf([...answers]);
    const url = `https://hooks.example:${target.port}/`;
    const result = await sendWebhook({ url, headers: {}, body: BODY }, { ...guarded, resolve });
    t.match(result, { outcome: 'refused', error: `the host resolves to a refused address (${reason})`, address });
  }
  t.equal(target.connections(), 0, 'the loopback receiver saw no connection');
});

t.test('registration: the URL rules', async (t) => {
  t.equal(targetUrlProblem('https://hooks.example.com/in', { allowPrivate: false }), null);
  t.equal(targetUrlProblem('https://8.8.8.8/in', { allowPrivate: false }), null);
  t.equal(targetUrlProblem('http://hooks.example.com/in', { allowPrivate: false }), 'the URL must be https');
  t.equal(targetUrlProblem('http://127.0.0.1:3000/in', { allowPrivate: true }), null);
  t.equal(targetUrlProblem('https://[::1]/', { allowPrivate: true }), null);
  t.equal(targetUrlProblem('ws://127.0.0.1/', { allowPrivate: true }), 'the URL must be http or https');
  t.equal(targetUrlProblem('http://10.0.0.1/', { allowPrivate: true }), PLAIN_HTTP_RULE, 'plain http: loopback only');
  t.equal(targetUrlProblem('http://[::1]:3000/', { allowPrivate: true }), null);
  t.equal(targetUrlProblem('http://0x7f.1/', { allowPrivate: true }), null, 'loopback however it is spelled');
  t.equal(targetUrlProblem('https://10.0.0.1/', { allowPrivate: false }), 'the host is a refused address (private)');
  t.equal(targetUrlProblem('https://0x7f.1/', { allowPrivate: false }), 'the host is a refused address (loopback)');
  t.equal(
    targetUrlProblem('https://a:@hooks.example/', { allowPrivate: false }),
    'the URL must not carry a user name or password',
  );
});

t.test('plain http: an attempt goes only to a loopback address, whatever the name resolved to', async (t) => {
  const target = await receiver(t, (_request, response) => response.writeHead(204).end(), '127.0.0.1');
  const { resolve } = resolverOf(['10.1.2.3']);
  const refused = await sendWebhook(
    { url: `http://hooks.invalid:${target.port}/in`, headers: {}, body: BODY },
    { ...LOCAL, resolve },
  );
  t.match(refused, { outcome: 'refused', error: PLAIN_HTTP_RULE, address: '10.1.2.3' });
  t.equal(target.connections(), 0, 'nothing was connected');
});

t.test('the pinned lookup answers the checked address, whatever it is asked', async (t) => {
  const lookup = pinnedLookup({ address: '2606:4700:4700::1111', family: 6 });
  const one = await new Promise((resolve) =>
    lookup('anything.example', {}, (error, address, family) => resolve({ error, address, family })),
  );
  t.same(one, { error: null, address: '2606:4700:4700::1111', family: 6 });
  const all = await new Promise((resolve) =>
    lookup('anything.example', { all: true, family: 0 }, (error, addresses) => resolve({ error, addresses })),
  );
  t.same(all, { error: null, addresses: [{ address: '2606:4700:4700::1111', family: 6 }] });
});

t.test('DNS rebinding: the socket gets the checked address, not a later answer', async (t) => {
  // The name answers a public address to the check, then a loopback one. The socket's connect is
  // stopped before it goes anywhere, and what it was handed is examined.
  const { resolve, calls } = resolverOf(['93.184.215.14'], ['127.0.0.1']);
  const handed: { host?: string; port?: unknown; servername?: string; lookup?: LookupFunction }[] = [];
  const connect = Socket.prototype.connect;
  t.teardown(() => {
    Socket.prototype.connect = connect;
  });
  Socket.prototype.connect = function stopped(this: Socket, ...args: unknown[]) {
    handed.push((Array.isArray(args[0]) ? args[0][0] : args[0]) as (typeof handed)[number]);
    // Never connects; destroyed once tls.connect has finished setting the socket up.
    process.nextTick(() => this.destroy(new Error('stopped before connecting')));
    return this;
  } as typeof connect;
  const result = await sendWebhook(
    { url: 'https://hooks.example:8443/in', headers: {}, body: BODY },
    { allowPrivate: false, resolve },
  );
  Socket.prototype.connect = connect;

  t.match(result, { outcome: 'failed', address: '93.184.215.14', error: /stopped before connecting/ });
  t.equal(handed.length, 1, 'one socket');
  const [options] = handed;
  t.equal(options?.host, 'hooks.example', 'it connects to the name: TLS checks the certificate against it');
  t.equal(options?.servername, 'hooks.example', 'and sends it as SNI');
  t.equal(String(options?.port), '8443');
  t.equal(calls(), 1, 'the name was resolved once, for the check');
  const lookup = options?.lookup;
  if (!lookup) throw new Error('the socket was handed no lookup');
  const one = await new Promise((done) =>
    lookup('hooks.example', {}, (error, address, family) => done({ error, address, family })),
  );
  t.same(one, { error: null, address: '93.184.215.14', family: 4 }, 'the lookup answers the checked address');
  const all = await new Promise((done) =>
    lookup('hooks.example', { all: true }, (error, addresses) => done({ error, addresses })),
  );
  t.same(all, { error: null, addresses: [{ address: '93.184.215.14', family: 4 }] }, 'in both shapes');
  t.same(await resolve('hooks.example'), [{ address: '127.0.0.1', family: 4 }], 'while the name now answers loopback');
});

t.test('pinned over real sockets: each attempt resolves once and connects where it checked', async (t) => {
  const first = await receiver(t, (_request, response) => response.writeHead(204).end(), '127.0.0.1');
  const second = await receiver(t, (_request, response) => response.writeHead(204).end(), '127.0.0.2', first.port);
  const { resolve, calls } = resolverOf(['127.0.0.1'], ['127.0.0.2']);
  const url = `http://receiver.invalid:${first.port}/in`;

  const one = await sendWebhook({ url, headers: {}, body: BODY }, { ...LOCAL, resolve });
  t.match(one, { outcome: 'delivered', address: '127.0.0.1' });
  t.equal(calls(), 1, 'resolved once: the connection did not look the name up again');
  t.equal(first.received.length, 1);
  t.equal(second.received.length, 0, 'the later answer got nothing');
  t.equal(first.received[0]?.headers.host, `receiver.invalid:${first.port}`, 'the Host header is the real name');

  const two = await sendWebhook({ url, headers: {}, body: BODY }, { ...LOCAL, resolve });
  t.match(two, { outcome: 'delivered', address: '127.0.0.2' });
  // A pooled keep-alive socket would carry this attempt to the first address: none is reused.
  t.equal(calls(), 2, 'the next attempt resolves again');
  t.equal(first.received.length, 1);
  t.equal(second.received.length, 1);
});
