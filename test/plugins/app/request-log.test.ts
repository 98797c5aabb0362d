import type { FastifyReply, FastifyRequest } from 'fastify';
import t from 'tap';
import { RequestLogController, SLOW_REQUEST_MS } from '../../../plugins/app/request-log.js';

/** One line per request: successes at debug, client errors and slow answers at info, failures at error. */

function logged(level: string, statusCode: number, elapsedTime: number, error?: Error) {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const enabled = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'].slice(0, ['fatal', 'error', 'warn', 'info', 'debug', 'trace'].indexOf(level) + 1);
  const log = Object.fromEntries(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace'].map((name) => [name, (fields: Record<string, unknown>, message: string) => lines.push({ level: name, fields, message })]),
  );
  const request = { method: 'GET', url: '/api/packs?limit=5', log: { ...log, isLevelEnabled: (name: string) => enabled.includes(name) } } as unknown as FastifyRequest;
  const reply = { statusCode, elapsedTime } as unknown as FastifyReply;
  const controller = new RequestLogController();
  controller.incomingRequest();
  controller.requestCompleted(error, request, reply);
  return lines;
}

t.test('a successful request is one line at debug, and nothing at info', async (t) => {
  t.same(logged('info', 200, 3), []);
  t.same(logged('debug', 200, 3), [
    { level: 'debug', fields: { method: 'GET', url: '/api/packs?limit=5', statusCode: 200, responseTime: 3 }, message: 'request completed' },
  ]);
});

t.test('client errors are logged at info; slow answers at info whatever their status', async (t) => {
  t.same(logged('info', 404, 2.345), [
    { level: 'info', fields: { method: 'GET', url: '/api/packs?limit=5', statusCode: 404, responseTime: 2.3 }, message: 'request completed' },
  ]);
  t.same(logged('info', 200, SLOW_REQUEST_MS + 1)[0]?.message, 'slow request');
  t.same(logged('warn', 404, 2), [], 'nothing below the configured level');
});

t.test('a request that errored is logged at error with its error', async (t) => {
  const error = new Error('socket hang up');
  t.match(logged('warn', 500, 5, error), [{ level: 'error', fields: { statusCode: 500, err: error } }]);
});
