import { createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { watchDatabase, type DatabaseWatch } from '../../../../plugins/app/database/watch.js';
import { readSuiteDatabase } from '../../../support/test-database.js';
import { startTcpProxyTo, type TcpProxy } from '../../../support/tcp-proxy.js';

/** The watch on its own, through a TCP proxy to the suite's server: what it reports, and when. */

const quiet = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, withinMs: number): Promise<boolean> {
  const end = Date.now() + withinMs;
  while (!condition() && Date.now() < end) await sleep(10);
  return condition();
}

function startWatch(t: Test, proxy: TcpProxy, timeoutMs: number) {
  const events: string[] = [];
  const watch: DatabaseWatch = watchDatabase({
    url: proxy.urlFor(readSuiteDatabase().serverUrl),
    intervalMs: 50,
    timeoutMs,
    log: quiet,
    onDown: () => events.push('down'),
    onUp: () => events.push('up'),
  });
  t.teardown(() => watch.stop());
  return { watch, events };
}

async function proxyFor(t: Test): Promise<TcpProxy> {
  const proxy = await startTcpProxyTo(readSuiteDatabase().serverUrl);
  t.teardown(() => proxy.close());
  return proxy;
}

t.test('silence marks the database down after the timeout; the first answer marks it up', async (t) => {
  const proxy = await proxyFor(t);
  const { watch, events } = startWatch(t, proxy, 300);
  await sleep(300);
  t.equal(watch.down, undefined, 'up while it answers');

  proxy.partition();
  const cutAt = Date.now();
  t.ok(await until(() => watch.down !== undefined, 2000), 'down during the cut');
  t.ok(Date.now() - cutAt >= 250, 'not before the timeout');
  t.match(watch.down?.message, /no answer within 300 ms/);

  proxy.restore();
  t.ok(await until(() => watch.down === undefined, 2000), 'up once the network heals');
  t.same(events, ['down', 'up']);
});

t.test('a refused connection marks it down at once', async (t) => {
  const proxy = await proxyFor(t);
  const { watch, events } = startWatch(t, proxy, 5000);
  await sleep(300);
  proxy.refuse();
  t.ok(await until(() => watch.down !== undefined, 1000), 'down well before the 5 s timeout');
  proxy.restore();
  t.ok(await until(() => watch.down === undefined, 2000), 'up again');
  t.same(events, ['down', 'up']);
});

t.test('stop() during a ping is no outage: the ended watch never reports the database down', async (t) => {
  const proxy = await proxyFor(t);
  const { watch, events } = startWatch(t, proxy, 10_000);
  await sleep(300);
  // A ping that will wait for its answer: stop() drops its connection under it.
  proxy.partition();
  await sleep(200);
  watch.stop();
  await sleep(200);
  t.equal(watch.down, undefined, 'a stopped watch knows nothing');
  t.same(events, [], 'no down event');
});

t.test('a connection the server ended (a restart) is no outage when a new one answers', async (t) => {
  const proxy = await proxyFor(t);
  const { watch, events } = startWatch(t, proxy, 5000);
  await sleep(300);
  // Every connection is reset, and new ones are accepted again at once.
  proxy.refuse();
  proxy.restore();
  await sleep(300);
  t.equal(watch.down, undefined, 'up');
  t.same(events, [], 'never reported down');
});

t.test(
  'stop() while a connection is being opened closes it: nothing of the watch is still logging in when the database stops',
  async (t) => {
    // A server that accepts and never answers: the watch's connection stays in its start-up.
    const accepted: Socket[] = [];
    const server = createServer((socket) => {
      accepted.push(socket);
      // Read (and drop) what it sends, so that its end is seen.
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      for (const socket of accepted) socket.destroy();
      server.close();
    });
    const { port } = server.address() as { port: number };
    const watch = watchDatabase({
      url: `postgres://watch@127.0.0.1:${port}/db`,
      intervalMs: 20,
      timeoutMs: 10_000,
      log: quiet,
      onDown: () => {},
      onUp: () => {},
    });
    t.teardown(() => watch.stop());
    t.ok(await until(() => accepted.length === 1, 2000), 'the watch is connecting');
    const socket = accepted[0] as Socket;
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    watch.stop();
    const outcome = await Promise.race([closed.then(() => 'closed'), sleep(1000).then(() => 'still open')]);
    t.equal(outcome, 'closed', 'the connection being opened is closed at once');
    await sleep(100);
    t.equal(accepted.length, 1, 'and no other is opened');
  },
);
