import type { FastifyBaseLogger } from 'fastify';
import type { EventConsumer } from './service.js';

/** The fallback when a NOTIFY is missed: every consumer looks for new events this often. */
export const POLL_MS = 1000;
/** Batches one wake handles before letting the timers and other work in. */
const MAX_BATCHES_PER_WAKE = 50;
/**
 * The least time between two runs: wakes meanwhile (a NOTIFY per committed change) are gathered
 * into one run. Under a crowd, one batch of many events costs far less than many runs of a few.
 */
export const MIN_RUN_GAP_MS = 200;

/**
 * Runs a consumer in the background: woken by `wake()` (a NOTIFY, the poll), one run at a time in
 * this process, batch after batch while batches come back full. A wake during a run runs again
 * after it, so an event appended meanwhile is not left for the poll.
 */
export function runInBackground(consumer: EventConsumer, log: FastifyBaseLogger) {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let lastRunEnded = 0;
  let gathering: NodeJS.Timeout | undefined;

  async function work(): Promise<void> {
    for (let batch = 0; batch < MAX_BATCHES_PER_WAKE && !stopped; batch++) {
      const handled = await consumer.runOnce();
      // Another instance is consuming: it reads what this wake was for.
      if (handled === undefined || handled < consumer.batchSize) return;
    }
    again = true;
  }

  const wake = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    const wait = lastRunEnded + MIN_RUN_GAP_MS - Date.now();
    if (wait > 0) {
      gathering ??= setTimeout(() => {
        gathering = undefined;
        wake();
      }, wait);
      return;
    }
    running = work()
      .catch((error) =>
        log.warn({ err: error, consumer: consumer.name }, 'an event consumer run failed; the next wake retries'),
      )
      .finally(() => {
        running = undefined;
        lastRunEnded = Date.now();
        if (again) {
          again = false;
          wake();
        }
      });
  };

  const poll = setInterval(wake, POLL_MS);
  poll.unref();
  return {
    wake,
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(gathering);
      await running;
    },
  };
}
