import { overloadedError, toErrorResponse } from '../errors.js';

interface Waiting<In, Out> {
  item: In;
  resolve: (value: Out) => void;
  reject: (error: unknown) => void;
  /** When it joined the queue (performance.now()). */
  queuedAt: number;
}

export interface BatcherOptions {
  /**
   * A request that has waited this long and is left queued behind the batch starting is refused
   * with 503 `overloaded` (nothing has been done for it yet); the batch starting is served
   * whatever its wait, so no request waits much past this plus one batch. 0: no limit.
   */
  maxWaitMs?: number;
  /** Told of a batch that failed as a whole, before its requests are run again alone (or rejected). */
  onFault?: (fault: { key: string; size: number; error: unknown; rerunAlone: boolean }) => void;
}

/**
 * Group commit for work that serializes on one lock per key (a pack's row): while a batch for a
 * key runs, requests for that key queue, and the next batch takes them all (up to `maxBatch`) at
 * once. A request arriving at an idle key starts at once: nothing ever waits for a batch to fill.
 */
export class KeyedBatcher<In, Out> {
  readonly #queues = new Map<string, Waiting<In, Out>[]>();
  readonly #running = new Set<string>();
  /** When each running key's batch started. */
  readonly #batchStarted = new Map<string, number>();
  /** How long a batch takes, on average (weighted towards the latest). */
  #averageBatchMs = 0;

  /**
   * @param run does one batch; answers, in order, each item's result or the error to reject it
   *   with. When `run` itself throws, an error that says the database cannot do the work now (a
   *   503: overloaded, unreachable) rejects the whole batch; any other is a fault of one item or of
   *   the batch, so each item is run again alone, and one item that fails cannot fail the others.
   */
  constructor(
    private readonly run: (key: string, items: In[]) => Promise<(Out | Error)[]>,
    readonly maxBatch: number,
    private readonly options: BatcherOptions = {},
  ) {}

  submit(key: string, item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      const waiting = { item, resolve, reject, queuedAt: performance.now() };
      const queue = this.#queues.get(key);
      if (queue) queue.push(waiting);
      else this.#queues.set(key, [waiting]);
      if (!this.#running.has(key)) void this.#drain(key);
    });
  }

  /**
   * How long an item submitted now for `key` can expect to wait before its batch starts: the batch
   * running (the average batch, or how long it has run if longer), and the full batches queued
   * ahead of it at the average. Nothing at an idle key. The average is over every key of this
   * batcher: one pack's large batches make a quiet pack's estimate longer, not shorter.
   */
  expectedWaitMs(key: string): number {
    const started = this.#batchStarted.get(key);
    if (started === undefined) return 0;
    const queued = this.#queues.get(key)?.length ?? 0;
    // The batch running has taken at least as long as it has run so far.
    const running = Math.max(this.#averageBatchMs, performance.now() - started);
    return running + Math.floor(queued / this.maxBatch) * this.#averageBatchMs;
  }

  /**
   * Takes the next batch of `key`'s queue, then refuses the requests left queued behind it that
   * have already waited too long. The batch taken is served even if it waited past the limit (a
   * stall of the batch before it): refusing work whose turn has come saves the database nothing,
   * as the client's retry costs the same work a second later. What is left behind would wait one
   * more batch at least: that is the queue a database that cannot keep up builds, and is shed.
   */
  #nextBatch(queue: Waiting<In, Out>[]): Waiting<In, Out>[] {
    const batch = queue.splice(0, this.maxBatch);
    const maxWaitMs = this.options.maxWaitMs ?? 0;
    if (maxWaitMs > 0) {
      const tooOld = performance.now() - maxWaitMs;
      let late = 0;
      while (late < queue.length && (queue[late] as Waiting<In, Out>).queuedAt < tooOld) late++;
      for (const entry of queue.splice(0, late)) entry.reject(overloadedError(1));
    }
    return batch;
  }

  #settle(batch: Waiting<In, Out>[], results: (Out | Error)[]): void {
    batch.forEach((entry, index) => {
      const result = results[index];
      if (result instanceof Error) entry.reject(result);
      else entry.resolve(result as Out);
    });
  }

  async #runAlone(key: string, batch: Waiting<In, Out>[]): Promise<void> {
    for (const entry of batch) {
      try {
        this.#settle([entry], await this.run(key, [entry.item]));
      } catch (error) {
        entry.reject(error);
      }
    }
  }

  async #drain(key: string): Promise<void> {
    this.#running.add(key);
    try {
      for (;;) {
        const queue = this.#queues.get(key);
        if (!queue || queue.length === 0) break;
        const batch = this.#nextBatch(queue);
        const started = performance.now();
        this.#batchStarted.set(key, started);
        try {
          this.#settle(
            batch,
            await this.run(
              key,
              batch.map((entry) => entry.item),
            ),
          );
        } catch (error) {
          const rerunAlone = batch.length > 1 && toErrorResponse(error).statusCode !== 503;
          this.options.onFault?.({ key, size: batch.length, error, rerunAlone });
          if (rerunAlone) await this.#runAlone(key, batch);
          else for (const entry of batch) entry.reject(error);
        }
        const ms = performance.now() - started;
        this.#averageBatchMs = this.#averageBatchMs === 0 ? ms : this.#averageBatchMs * 0.8 + ms * 0.2;
      }
    } finally {
      this.#queues.delete(key);
      this.#running.delete(key);
      this.#batchStarted.delete(key);
    }
  }
}
