import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { pino } from 'pino';
import t from 'tap';
import { lazyRequestLogger, RequestLogController, SLOW_REQUEST_MS } from '../../../plugins/app/request-log.js';

/** One line per request: successes at debug, client errors and slow answers at info, failures at error. */

function logged(level: string, statusCode: number, elapsedTime: number, error?: Error) {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const enabled = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'].slice(
    0,
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace'].indexOf(level) + 1,
  );
  const log = Object.fromEntries(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace'].map((name) => [
      name,
      (fields: Record<string, unknown>, message: string) => lines.push({ level: name, fields, message }),
    ]),
  );
  const request = {
    method: 'GET',
    url: '/api/packs?limit=5',
    log: { ...log, isLevelEnabled: (name: string) => enabled.includes(name) },
  } as unknown as FastifyRequest;
  const reply = { statusCode, elapsedTime } as unknown as FastifyReply;
  const controller = new RequestLogController();
  controller.incomingRequest();
  controller.requestCompleted(error, request, reply);
  return lines;
}

t.test('a successful request is one line at debug, and nothing at info', async (t) => {
  t.same(logged('info', 200, 3), []);
  t.same(logged('debug', 200, 3), [
    {
      level: 'debug',
      fields: { method: 'GET', url: '/api/packs?limit=5', statusCode: 200, responseTime: 3 },
      message: 'request completed',
    },
  ]);
});

t.test('client errors are logged at info; slow answers at info whatever their status', async (t) => {
  t.same(logged('info', 404, 2.345), [
    {
      level: 'info',
      fields: { method: 'GET', url: '/api/packs?limit=5', statusCode: 404, responseTime: 2.3 },
      message: 'request completed',
    },
  ]);
  t.same(logged('info', 200, SLOW_REQUEST_MS + 1)[0]?.message, 'slow request');
  t.same(logged('warn', 404, 2), [], 'nothing below the configured level');
});

t.test('a request that errored is logged at error with its error', async (t) => {
  const error = new Error('socket hang up');
  t.match(logged('warn', 500, 5, error), [{ level: 'error', fields: { statusCode: 500, err: error } }]);
});

t.test('a request logger is made when the request first logs, and carries its bindings', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const stream = { write: (line: string) => lines.push(JSON.parse(line)) };
  const parent = pino({ level: 'info' }, stream) as unknown as FastifyBaseLogger;
  let made = 0;
  const counting = Object.assign(Object.create(parent), {
    child: (bindings: Record<string, unknown>, options?: object) => {
      made += 1;
      return parent.child(bindings, options);
    },
  }) as FastifyBaseLogger;

  const log = lazyRequestLogger(counting, { reqId: 'r-1' }, {});
  t.equal(
    (log as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled('debug'),
    false,
    "levels are the parent's",
  );
  t.equal((log as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled('info'), true);
  t.equal(log.level, 'info');
  log.debug('not written');
  t.equal(made, 1, 'a call that logs makes the child (pino decides what is written)');
  log.info({ step: 2 }, 'written');
  log.warn('again');
  t.equal(made, 1, 'once');
  t.match(lines, [
    { level: 30, reqId: 'r-1', step: 2, msg: 'written' },
    { level: 40, reqId: 'r-1', msg: 'again' },
  ]);

  const quiet = lazyRequestLogger(counting, { reqId: 'r-2' }, {});
  (quiet as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled('error');
  t.equal(quiet.level, 'info');
  t.equal(made, 1, 'asking about levels makes no child');

  const routeLevel = lazyRequestLogger(counting, { reqId: 'r-3' }, { level: 'debug' });
  t.equal(
    (routeLevel as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled('debug'),
    true,
    "a route's own level is its child's",
  );
  routeLevel.child({ part: 'x' }).info('from a grandchild');
  t.match(lines.at(-1), { reqId: 'r-3', part: 'x', msg: 'from a grandchild' });
});
