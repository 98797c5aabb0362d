import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyBaseLogger } from 'fastify';
import { StripeCharge, StripeCheckoutSession, StripeDispute } from '../../../schemas/checkout.js';
import type { Database } from '../database/index.js';
import { findOrder, settlePending } from './repository.js';
import type { EventMeta, Settlement } from './settlement.js';

/** Handles one event's object in the transaction that records the event. */
export type EventHandler = (tx: Database, object: unknown, event: EventMeta) => Promise<void>;

/**
 * A handler whose object is checked against `schema` before `handle` reads it, typed. An object
 * that does not match is an error (500): the event is not recorded, so Stripe delivers it again,
 * rather than acknowledging money movements this service could not read.
 */
function on<T extends TSchema>(
  schema: T,
  handle: (tx: Database, object: Static<T>, event: EventMeta) => Promise<void>,
): EventHandler {
  const check = TypeCompiler.Compile(schema);
  return async (tx, object, event) => {
    if (!check.Check(object)) {
      const error = check.Errors(object).First();
      throw new Error(
        `the ${event.type} event ${event.id} carries an object this service cannot read: ${error?.path ?? ''} ${error?.message ?? ''}`.trim(),
      );
    }
    await handle(tx, object, event);
  };
}

/** The order a Checkout Session belongs to: its client_reference_id, which is the order id. */
const orderIdOf = (session: StripeCheckoutSession) => session.client_reference_id ?? session.metadata?.orderId ?? null;

/**
 * The Stripe events that move an order, by type; any other type is acknowledged and ignored. Each
 * runs in the transaction that records the event, so it takes effect once.
 */
export function createEventHandlers(deps: {
  settlement: Settlement;
  log: FastifyBaseLogger;
}): ReadonlyMap<string, EventHandler> {
  const { settlement, log } = deps;

  /** The session's order, locked; undefined (and logged) for a session that is not one of ours. */
  async function orderOf(tx: Database, session: StripeCheckoutSession, event: EventMeta) {
    const orderId = orderIdOf(session);
    const order = orderId ? await findOrder(tx, orderId, { lock: true }) : undefined;
    if (!order || (order.providerRef && order.providerRef !== session.id)) {
      log.warn({ eventId: event.id, type: event.type, orderId }, 'a Stripe event for no order of ours: ignored');
      return undefined;
    }
    return order;
  }

  const paid = on(StripeCheckoutSession, async (tx, session, event) => {
    const order = await orderOf(tx, session, event);
    if (order) await settlement.fulfil(tx, order, session);
  });

  return new Map<string, EventHandler>([
    ['checkout.session.completed', paid],
    ['checkout.session.async_payment_succeeded', paid],
    [
      'checkout.session.async_payment_failed',
      on(StripeCheckoutSession, async (tx, session, event) => {
        const order = await orderOf(tx, session, event);
        if (order) await settlePending(tx, order.id, { status: 'failed', reason: 'the payment failed' });
      }),
    ],
    [
      'checkout.session.expired',
      on(StripeCheckoutSession, async (tx, session, event) => {
        const order = await orderOf(tx, session, event);
        if (order) await settlePending(tx, order.id, { status: 'expired' });
      }),
    ],
    ['charge.refunded', on(StripeCharge, settlement.refund)],
    ['charge.dispute.created', on(StripeDispute, settlement.disputeOpened)],
    ['charge.dispute.closed', on(StripeDispute, (tx, dispute) => settlement.disputeClosed(tx, dispute))],
  ]);
}
