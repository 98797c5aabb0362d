import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../app.js';
import { ADMIN, expectStatus } from './catalog.js';
import { call } from './teams.js';

/**
 * Outbound webhook fixtures: a receiver on 127.0.0.1 (node:http) that answers as each test
 * tells it (fail, hang, redirect, 410), and the endpoints API called as an admin would.
 */

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  path: string;
}

/** What the receiver does with a request: answer a status (with headers), or never answer. */
export type Behavior = (
  request: Received,
  index: number,
) => { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  behave(behavior: Behavior): void;
  /** The requests received, one per webhook-id: what a receiver that dedupes by it handles. */
  unique(): Received[];
  /** Resolves once `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function startReceiver(t: Teardown, behavior: Behavior = () => ({ status: 204 })): Promise<Receiver> {
  const received: Received[] = [];
  let current = behavior;
  const hanging = new Set<ServerResponse>();
  const waiters: Array<() => void> = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Received['json'];
      try {
        json = JSON.parse(body);
      } catch {
        json = { type: '(not json)', timestamp: '', data: {} };
      }
      const entry = { headers: request.headers, body, json, path: request.url ?? '/' };
      received.push(entry);
      for (const wake of waiters.splice(0)) wake();
      const answer = current(entry, received.length - 1);
      if (answer === 'hang') {
        hanging.add(response);
        return;
      }
      response.writeHead(answer.status, answer.headers ?? {});
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    behave(next) {
      current = next;
    },
    unique() {
      const seen = new Map<string, Received>();
      for (const entry of received) seen.set(String(entry.headers['webhook-id']), entry);
      return [...seen.values()];
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the receiver got ${received.length} requests, not ${count}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}

export const teamWebhooksUrl = (teamId: string, rest = '') =>
  `/api/admin/teams/${encodeURIComponent(teamId)}/webhooks${rest}`;
export const platformWebhooksUrl = (rest = '') => `/api/admin/webhooks${rest}`;

export interface EndpointView {
  id: string;
  teamId: string | null;
  url: string;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  disabledDetail: string | null;
  failingSince: string | null;
  previousSecretExpiresAt: string | null;
}

/** Registers an endpoint at `base` (a team's or the platform's webhooks URL); answers it and its secret. */
export async function registerEndpoint(
  app: App,
  base: string,
  body: Record<string, unknown>,
  token: string = ADMIN,
): Promise<{ endpoint: EndpointView; secret: string }> {
  const res = await call(app, 'POST', base, token, { payload: body });
  expectStatus(res, 201, `register ${JSON.stringify(body)}`);
  return res.json().data;
}

export interface DeliveryView {
  id: string;
  webhookId: string;
  eventId: string | null;
  type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

/** Every delivery of an endpoint, newest first (all pages). */
export async function deliveriesOf(app: App, endpointUrl: string, token: string = ADMIN): Promise<DeliveryView[]> {
  const all: DeliveryView[] = [];
  let cursor: string | null = null;
  do {
    const res: LightMyRequestResponse = await call(app, 'GET', `${endpointUrl}/deliveries`, token, {
      query: { limit: '200', ...(cursor ? { cursor } : {}) },
    });
    expectStatus(res, 200, 'list deliveries');
    all.push(...res.json().data);
    cursor = res.json().nextCursor;
  } while (cursor);
  return all;
}

/** Turns committed events into deliveries and sends what is due by `at`. */
export async function deliverNow(app: App, at?: Date): Promise<number> {
  await app.webhooks.consumer.catchUp();
  return app.webhooks.sender.runDue(at ? { at } : {});
}

/** Private targets allowed: the receiver runs on loopback. */
export const LOOPBACK_ENV = { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' };
