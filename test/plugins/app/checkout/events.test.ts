import type { FastifyBaseLogger } from 'fastify';
import t from 'tap';
import { createEventHandlers } from '../../../../plugins/app/checkout/events.js';
import type { Settlement } from '../../../../plugins/app/checkout/settlement.js';
import type { Database } from '../../../../plugins/app/database/index.js';

/**
 * The table of webhook handlers: one per event type that moves an order, each reading its object
 * only once it matches the schema of what it reads. Refunds and disputes go to settlement as they
 * are (the session events need the database: the checkout route tests cover them).
 */

const calls: [string, unknown][] = [];
const settlement: Settlement = {
  fulfil: async () => 'settled',
  fulfilled: async () => {},
  refunded: async () => {},
  refund: async (_tx, charge) => {
    calls.push(['refund', charge]);
  },
  disputeOpened: async (_tx, dispute) => {
    calls.push(['disputeOpened', dispute]);
  },
  disputeClosed: async (_tx, dispute) => {
    calls.push(['disputeClosed', dispute]);
  },
};
const silent = { warn: () => {}, error: () => {} } as unknown as FastifyBaseLogger;
const handlers = createEventHandlers({ settlement, log: silent });
const tx = {} as Database;
const meta = (type: string) => ({ id: 'evt_1', type, created: Math.floor(Date.now() / 1000) });

t.test('the types handled', async (t) => {
  t.same([...handlers.keys()].sort(), [
    'charge.dispute.closed',
    'charge.dispute.created',
    'charge.refunded',
    'checkout.session.async_payment_failed',
    'checkout.session.async_payment_succeeded',
    'checkout.session.completed',
    'checkout.session.expired',
  ]);
  t.notOk(handlers.get('customer.created'), 'any other type has no handler');
});

t.test('refunds and disputes reach settlement with their objects, extra fields and all', async (t) => {
  calls.length = 0;
  const charge = {
    id: 'ch_1',
    object: 'charge',
    amount: 999,
    amount_refunded: 500,
    payment_intent: 'pi_1',
    paid: true,
  };
  const dispute = { id: 'dp_1', status: 'won', payment_intent: { id: 'pi_1', object: 'payment_intent' } };
  await handlers.get('charge.refunded')?.(tx, charge, meta('charge.refunded'));
  await handlers.get('charge.dispute.created')?.(tx, dispute, meta('charge.dispute.created'));
  await handlers.get('charge.dispute.closed')?.(tx, dispute, meta('charge.dispute.closed'));
  t.same(calls, [
    ['refund', charge],
    ['disputeOpened', dispute],
    ['disputeClosed', dispute],
  ]);
});

t.test('an object that does not match what its handler reads is refused before anything moves', async (t) => {
  calls.length = 0;
  const cases: [string, unknown, RegExp][] = [
    ['charge.refunded', { id: 'ch_1', amount: 999, payment_intent: 'pi_1' }, /amount_refunded/],
    ['charge.refunded', { id: 'ch_1', amount: '999', amount_refunded: 0 }, /\/amount/],
    ['charge.dispute.created', { id: 'dp_1', payment_intent: 'pi_1' }, /status/],
    ['checkout.session.completed', { client_reference_id: 'order-1', payment_status: 'paid' }, /id/],
    ['checkout.session.expired', null, /cannot read/],
  ];
  for (const [type, object, message] of cases) {
    await t.rejects(handlers.get(type)?.(tx, object, meta(type)) ?? Promise.resolve(), message, type);
  }
  t.same(calls, [], 'settlement was never called');
});
