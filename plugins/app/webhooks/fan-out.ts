import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '../../../schemas/events.js';
import type { Database } from '../database/index.js';
import { insertDeliveries, type NewDelivery, notifySender, subscribedEndpoints } from './repository.js';
import { endpointsFor, eventPayload } from './rules.js';

/**
 * The event-log consumer's work: one delivery per (event, endpoint that receives it), in the
 * consumer's transaction, keyed by (endpoint, event id) so that a batch handled again creates
 * nothing twice. The NOTIFY wakes the senders of every instance once it commits.
 */
export async function fanOut(tx: Database, batch: readonly DomainEvent[]): Promise<void> {
  const endpoints = await subscribedEndpoints(tx);
  if (endpoints.length === 0) return;
  const deliveries: NewDelivery[] = [];
  for (const event of batch) {
    const receivers = endpointsFor(event, endpoints);
    if (receivers.length === 0) continue;
    const body = eventPayload(event);
    for (const endpoint of receivers) {
      deliveries.push({
        id: randomUUID(),
        endpointId: endpoint.id,
        messageId: event.id,
        eventId: Number(event.id),
        eventType: event.type,
        body,
      });
    }
  }
  if ((await insertDeliveries(tx, deliveries)) > 0) await notifySender(tx);
}
