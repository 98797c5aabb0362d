import { toErrorResponse } from '../errors.js';

interface Waiting<In, Out> {
  item: In;
  resolve: (value: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for work that serializes on one lock per key (a pack's row): while a batch for a
 * key runs, requests for that key queue, and the next batch takes them all (up to `maxBatch`) at
 * once. A request arriving at an idle key starts at once: nothing ever waits for a batch to fill.
 */
export class KeyedBatcher<In, Out> {
  readonly #queues = new Map<string, Waiting<In, Out>[]>();
  readonly #running = new Set<string>();
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
  ) {}

  submit(key: string, item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      const queue = this.#queues.get(key);
      if (queue) queue.push({ item, resolve, reject });
      else this.#queues.set(key, [{ item, resolve, reject }]);
      if (!this.#running.has(key)) void this.#drain(key);
    });
  }

  /**
   * How long an item submitted now for `key` can expect to wait before its batch starts: the batch
   * running, and the full batches queued ahead of it. Nothing at an idle key.
   */
  expectedWaitMs(key: string): number {
    if (!this.#running.has(key)) return 0;
    const queued = this.#queues.get(key)?.length ?? 0;
    return (1 + Math.floor(queued / this.maxBatch)) * this.#averageBatchMs;
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
        const batch = queue.splice(0, this.maxBatch);
        const started = performance.now();
        try {
          this.#settle(
            batch,
            await this.run(
              key,
              batch.map((entry) => entry.item),
            ),
          );
        } catch (error) {
          if (batch.length === 1 || toErrorResponse(error).statusCode === 503) for (const entry of batch) entry.reject(error);
          else await this.#runAlone(key, batch);
        }
        const ms = performance.now() - started;
        this.#averageBatchMs = this.#averageBatchMs === 0 ? ms : this.#averageBatchMs * 0.8 + ms * 0.2;
      }
    } finally {
      this.#queues.delete(key);
      this.#running.delete(key);
    }
  }
}
