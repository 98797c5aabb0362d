import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type DomainEvent, EVENT_DATA, type NewEvent } from '../../../schemas/events.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import {
  appendEvents,
  backlogOf,
  ensureCursor,
  eventsAfter,
  lockCursor,
  moveCursor,
  notifyConsumers,
} from './repository.js';

/** Under a crowd, at most one change this often notifies the consumers in its own transaction. */
const NOTIFY_GAP_MS = 50;

/** Events one consumer transaction reads and handles at most. */
export const DEFAULT_BATCH = 500;

const dataChecks = new Map<string, ReturnType<typeof TypeCompiler.Compile>>(
  Object.entries(EVENT_DATA).map(([type, schema]) => [type, TypeCompiler.Compile(schema)]),
);

export interface ConsumerDefinition {
  /** Unique per kind of consumer: the name of its cursor. */
  name: string;
  batchSize?: number;
  /**
   * Handles a batch of events in `tx`, the transaction that moves the cursor past them: what it
   * writes lands with the cursor or not at all. Must be idempotent by event id all the same.
   */
  handle(tx: Database, events: readonly DomainEvent[]): Promise<void>;
}

export interface EventConsumer {
  readonly name: string;
  readonly batchSize: number;
  /**
   * Handles the next batch, in one transaction. Answers how many events it handled, or undefined
   * when another instance is consuming now (unless `wait`, which waits for it to finish).
   */
  runOnce(options?: { wait?: boolean }): Promise<number | undefined>;
  /** Handles every event readable now, batch after batch, waiting for another instance's run if need be. */
  drain(): Promise<number>;
  /** The events appended past the cursor. */
  backlog(): Promise<number>;
  /**
   * Drains until every event committed before the call is handled: an event stays unreadable
   * while any older transaction of the server (of any database on it) is running, so this waits
   * for those, up to `timeoutMs`. For tests, benchmarks and scripts.
   */
  catchUp(timeoutMs?: number): Promise<number>;
}

/**
 * The domain event log: `append` in the transaction of a change; consumers read in commit order
 * (see repository.ts), one instance at a time, each event once.
 */
export function createEventsService(db: DatabaseHandle) {
  const consumers = new Map<string, EventConsumer>();
  /**
   * A NOTIFY in a transaction serializes its commit with every other notifying commit on the
   * server (a global lock held through the commit's WAL flush). Under a crowd, one transaction in
   * NOTIFY_GAP_MS notifies in itself; the others leave it to one NOTIFY sent on its own just after,
   * which wakes the consumers once they have committed (and the consumers' poll is the last resort).
   */
  let lastNotified = 0;
  let deferred: NodeJS.Timeout | undefined;
  const shouldNotify = (): boolean => {
    const now = Date.now();
    if (now - lastNotified >= NOTIFY_GAP_MS) {
      lastNotified = now;
      return true;
    }
    deferred ??= setTimeout(() => {
      deferred = undefined;
      lastNotified = Date.now();
      notifyConsumers(db.orm).catch(() => {});
    }, NOTIFY_GAP_MS);
    deferred.unref();
    return false;
  };
  return {
    /** Appends events in the caller's transaction; their data must match their type's schema. */
    async append(tx: Database, ...events: NewEvent[]): Promise<void> {
      if (events.length === 0) return;
      for (const event of events) {
        const check = dataChecks.get(event.type);
        if (!check?.Check(event.data)) {
          const problem = check?.Errors(event.data).First();
          throw new Error(`a ${event.type} event with invalid data: ${problem?.path} ${problem?.message}`);
        }
      }
      await appendEvents(tx, events, shouldNotify());
    },

    /** Defines a consumer; the plugin runs every defined consumer in the background (EVENT_CONSUMERS). */
    consumer(definition: ConsumerDefinition): EventConsumer {
      if (consumers.has(definition.name)) throw new Error(`the event consumer ${definition.name} is defined twice`);
      const batchSize = definition.batchSize ?? DEFAULT_BATCH;
      let cursorExists = false;
      const consumer: EventConsumer = {
        name: definition.name,
        batchSize,
        runOnce: async ({ wait = false } = {}) => {
          if (!cursorExists) {
            await ensureCursor(db.orm, definition.name);
            cursorExists = true;
          }
          return db.transaction(async (tx) => {
            const cursor = await lockCursor(tx, definition.name, !wait);
            if (!cursor) return undefined;
            const batch = await eventsAfter(tx, cursor, batchSize);
            const last = batch.at(-1);
            if (!last) return 0;
            await definition.handle(tx, batch);
            await moveCursor(tx, definition.name, { txid: last.txid, eventId: last.eventId });
            return batch.length;
          });
        },
        async drain() {
          let handled = 0;
          for (;;) {
            const count = (await consumer.runOnce({ wait: true })) ?? 0;
            handled += count;
            if (count < batchSize) return handled;
          }
        },
        backlog: () => backlogOf(db.orm, definition.name),
        async catchUp(timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          let handled = await consumer.drain();
          while ((await consumer.backlog()) > 0) {
            if (Date.now() > deadline)
              throw new Error(`the ${definition.name} consumer did not catch up in ${timeoutMs} ms`);
            await new Promise((resolve) => setTimeout(resolve, 10));
            handled += await consumer.drain();
          }
          return handled;
        },
      };
      consumers.set(definition.name, consumer);
      return consumer;
    },

    /** Every consumer defined so far. */
    consumers(): EventConsumer[] {
      return [...consumers.values()];
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
