import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import type { App } from '../../app.js';

/**
 * A local stand-in for the Stripe API, reached through STRIPE_API_BASE exactly as production
 * reaches Stripe: Checkout Sessions are created, read and paid as Stripe's API reference shapes
 * them (the fields this service reads), and webhook events are signed with the SDK's own
 * test-header helper.
 */

export const STRIPE_WEBHOOK_SECRET = 'whsec_test_stand_in_secret';

export interface StandInSession {
  id: string;
  object: 'checkout.session';
  mode: 'payment';
  client_reference_id: string | null;
  metadata: Record<string, string>;
  amount_total: number;
  currency: string;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  payment_intent: string | null;
  url: string | null;
  expires_at: number;
  success_url: string;
  cancel_url: string;
  created: number;
  livemode: false;
}

export interface StripeStandIn {
  url: string;
  env: Record<string, string>;
  sessions: Map<string, StandInSession>;
  /** Requests received, as "METHOD path". */
  requests: string[];
  /** Holds every Checkout Session creation until the returned function is called (a slow Stripe). */
  holdCreates(): () => void;
  /** The next `count` session creations answer 500, as Stripe does in an outage. */
  failCreates(count: number): void;
  /** Marks a session paid, as Stripe does when the buyer pays. */
  pay(sessionId: string): StandInSession;
  expire(sessionId: string): StandInSession;
  /** A Stripe event object around a copy of its object (a session, a charge). */
  event(type: string, object: object, id?: string): { id: string; body: string };
  /** The charge of a paid session, as `charge.refunded` carries it, with `amountRefunded` so far. */
  charge(session: StandInSession, amountRefunded: number): object;
  /** A dispute of a paid session's charge, as `charge.dispute.*` carries it. */
  dispute(session: StandInSession, status: 'needs_response' | 'won' | 'lost'): object;
  close(): Promise<void>;
}

const now = () => Math.floor(Date.now() / 1000);

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const sessions = new Map<string, StandInSession>();
  const byIdempotencyKey = new Map<string, string>();
  const requests: string[] = [];
  let createGate: Promise<void> | undefined;
  let failingCreates = 0;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', async () => {
      const path = (request.url ?? '/').split('?')[0] as string;
      requests.push(`${request.method} ${path}`);
      const send = (status: number, value: unknown) =>
        response
          .writeHead(status, {
            'content-type': 'application/json',
            'request-id': `req_${randomBytes(6).toString('hex')}`,
          })
          .end(JSON.stringify(value));
      if (request.method === 'POST' && path === '/v1/checkout/sessions') {
        await createGate;
        if (failingCreates > 0) {
          failingCreates -= 1;
          return send(500, { error: { type: 'api_error', message: 'An unknown error occurred.' } });
        }
        const key = request.headers['idempotency-key'];
        const known = typeof key === 'string' ? byIdempotencyKey.get(key) : undefined;
        if (known) return send(200, sessions.get(known));
        const form = new URLSearchParams(body);
        const id = `cs_test_${randomBytes(12).toString('hex')}`;
        const unitAmount = Number(form.get('line_items[0][price_data][unit_amount]'));
        const quantity = Number(form.get('line_items[0][quantity]') ?? 1);
        const session: StandInSession = {
          id,
          object: 'checkout.session',
          mode: 'payment',
          client_reference_id: form.get('client_reference_id'),
          metadata: Object.fromEntries(
            [...form.entries()]
              .filter(([name]) => name.startsWith('metadata['))
              .map(([name, value]) => [name.slice(9, -1), value]),
          ),
          amount_total: unitAmount * quantity,
          currency: form.get('line_items[0][price_data][currency]') ?? '',
          status: 'open',
          payment_status: 'unpaid',
          payment_intent: null,
          url: `https://checkout.stripe.test/c/pay/${id}`,
          expires_at: Number(form.get('expires_at')),
          success_url: form.get('success_url') ?? '',
          cancel_url: form.get('cancel_url') ?? '',
          created: now(),
          livemode: false,
        };
        sessions.set(id, session);
        if (typeof key === 'string') byIdempotencyKey.set(key, id);
        return send(200, session);
      }
      const expire = /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(path);
      if (request.method === 'POST' && expire) {
        const session = sessions.get(expire[1] as string);
        if (!session)
          return send(404, {
            error: {
              type: 'invalid_request_error',
              code: 'resource_missing',
              message: `No such checkout.session: '${expire[1]}'`,
            },
          });
        if (session.status !== 'open') {
          return send(400, {
            error: {
              type: 'invalid_request_error',
              message: `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${session.status}".`,
            },
          });
        }
        Object.assign(session, { status: 'expired', url: null });
        return send(200, session);
      }
      const read = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
      if (request.method === 'GET' && read) {
        const session = sessions.get(read[1] as string);
        return session
          ? send(200, session)
          : send(404, {
              error: {
                type: 'invalid_request_error',
                code: 'resource_missing',
                message: `No such checkout.session: '${read[1]}'`,
              },
            });
      }
      send(404, {
        error: { type: 'invalid_request_error', message: `Unrecognized request URL (${request.method}: ${path}).` },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const change = (sessionId: string, fields: Partial<StandInSession>) => {
    const session = sessions.get(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    Object.assign(session, fields);
    return session;
  };
  return {
    url,
    holdCreates: () => {
      let release = () => {};
      createGate = new Promise<void>((resolve) => {
        release = () => {
          createGate = undefined;
          resolve();
        };
      });
      return release;
    },
    failCreates: (count) => {
      failingCreates = count;
    },
    env: {
      STRIPE_SECRET_KEY: 'sk_test_stand_in',
      STRIPE_WEBHOOK_SECRET,
      STRIPE_API_BASE: url,
      CHECKOUT_SUCCESS_URL: 'https://app.example.com/coins/thanks',
      CHECKOUT_CANCEL_URL: 'https://app.example.com/coins',
    },
    sessions,
    requests,
    pay: (sessionId) =>
      change(sessionId, {
        status: 'complete',
        payment_status: 'paid',
        payment_intent: `pi_${randomBytes(8).toString('hex')}`,
      }),
    expire: (sessionId) => change(sessionId, { status: 'expired', url: null }),
    event: (type, object, id = `evt_${randomBytes(12).toString('hex')}`) => ({
      id,
      body: JSON.stringify({
        id,
        object: 'event',
        api_version: '2025-01-27.acacia',
        created: now(),
        livemode: false,
        pending_webhooks: 1,
        type,
        data: { object: { ...object } },
      }),
    }),
    dispute: (session, status) => ({
      id: `dp_${session.id.slice(8, 20)}`,
      object: 'dispute',
      amount: session.amount_total,
      currency: session.currency,
      charge: `ch_${session.id.slice(8, 20)}`,
      payment_intent: session.payment_intent,
      reason: 'fraudulent',
      status,
      livemode: false,
    }),
    charge: (session, amountRefunded) => ({
      id: `ch_${session.id.slice(8, 20)}`,
      object: 'charge',
      amount: session.amount_total,
      amount_captured: session.amount_total,
      amount_refunded: amountRefunded,
      refunded: amountRefunded >= session.amount_total,
      currency: session.currency,
      payment_intent: session.payment_intent,
      paid: true,
      status: 'succeeded',
      livemode: false,
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A Stripe-Signature header for a body, as Stripe signs it (the SDK's test helper). */
export function signatureFor(body: string, options: { secret?: string; timestamp?: number } = {}): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret: options.secret ?? STRIPE_WEBHOOK_SECRET,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
  });
}

/** Where Stripe delivers events. */
export const deliverable = { path: '/api/webhooks/stripe' };

export function deliver(app: App, body: string, signature = signatureFor(body)) {
  return app.inject({
    method: 'POST',
    url: '/api/webhooks/stripe',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
    payload: body,
  });
}
