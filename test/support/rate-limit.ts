import { randomBytes, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type t from 'tap';
import type { App } from '../../app.js';
import { tokenFor } from './app.js';

/** What the rate-limit tests share (test/plugins/external/rate-limit.test.ts, test/plugins/app/rate-limits.test.ts). */

/** The type of a subtest's `t` (tap's root `t` is a TAP, a different class). */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

export interface ErrorBody {
  success: false;
  error: { code: string; message: string; requestId?: string; details?: unknown };
}

export const LIMITED = { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '1 minute' };
export const REDIS_URL = 'redis://127.0.0.1:6379';
export const REDIS_PREFIX = 'pack-service:rate-limit:';

export const getUser = (app: App, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url: '/api/user', headers });

/** A token that looks right but is signed with another key: a forgery, different every time. */
export const forgedToken = () => tokenFor(`forger-${randomUUID()}`, {}, randomBytes(32).toString('hex'));

/** Asserts the 429 envelope and its headers for a limit of 3 per minute. */
export function expectLimited(t: Test, res: LightMyRequestResponse): void {
  t.equal(res.statusCode, 429);
  t.match(res.headers['content-type'], /^application\/json; charset=utf-8$/);
  const body = res.json() as ErrorBody;
  t.same(Object.keys(body).sort(), ['error', 'success']);
  t.equal(body.success, false);
  t.equal(body.error.code, 'rate_limited');
  t.match(body.error.message, /^Too many requests: the limit is 3 per 1 minute\. Retry after (60|59) s\.$/);
  t.equal(body.error.details, undefined);
  t.type(res.headers['x-request-id'], 'string');
  t.equal(body.error.requestId, res.headers['x-request-id']);
  const retryAfter = Number(res.headers['retry-after']);
  t.ok(retryAfter >= 59 && retryAfter <= 60, `retry-after is the rest of the window (${res.headers['retry-after']})`);
  t.equal(res.headers['x-ratelimit-limit'], '3');
  t.equal(res.headers['x-ratelimit-remaining'], '0');
}
