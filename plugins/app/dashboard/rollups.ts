import type { DomainEvent } from '../../../schemas/events.js';
import type { Database } from '../database/index.js';
import {
  addRollup,
  claimEvents,
  clearRollups,
  countedEventsAfter,
  type LogPosition,
  lockRollups,
} from './repository.js';
import { COUNTED_TYPES, rollupOf } from './rules.js';

/** Writing the rollups: the consumer's batches and the rebuild from the whole log. */

/** Events a rebuild reads and adds per statement. */
const REBUILD_BATCH = 5000;

/**
 * Adds a batch of events to the rollups in `tx` (the consumer's: the transaction that moves its
 * cursor past them). Events already counted, by an earlier run or a rebuild, add nothing.
 */
export async function applyEvents(tx: Database, batch: readonly DomainEvent[]): Promise<void> {
  const relevant = batch.filter((event) => COUNTED_TYPES.has(event.type));
  if (relevant.length === 0) return;
  await lockRollups(tx);
  const fresh = await claimEvents(
    tx,
    relevant.map((event) => Number(event.id)),
  );
  await addRollup(tx, rollupOf(relevant.filter((event) => fresh.has(Number(event.id)))));
}

/**
 * Recomputes every rollup from the event log in one transaction: emptied, then every counted
 * event of a committed transaction added back, so running it again gives the same sums. Events
 * the consumer reads afterwards are already counted and add nothing; the ones it cannot see yet
 * (their transaction still running) it adds later. Answers the events added.
 */
export function rebuildRollups(db: Database): Promise<number> {
  return db.transaction(async (tx) => {
    await lockRollups(tx);
    await clearRollups(tx);
    let after: LogPosition = { txid: '0', eventId: 0 };
    let added = 0;
    for (;;) {
      const batch = await countedEventsAfter(tx, after, REBUILD_BATCH);
      const last = batch.at(-1);
      if (!last) return added;
      await applyEvents(tx, batch);
      added += batch.length;
      after = { txid: last.txid, eventId: last.eventId };
    }
  });
}
