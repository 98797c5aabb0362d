/**
 * Group commit for work that serializes on one lock per key: while a batch for a key runs,
 * requests for that key queue, and the next batch takes them all (up to `maxBatch`) at once. A
 * request arriving at an idle key starts at once: nothing ever waits for a batch to fill.
 */
export class KeyedBatcher<In, Out> {
  readonly #queues = new Map<string, { item: In; resolve: (value: Out) => void; reject: (error: unknown) => void }[]>();
  readonly #running = new Set<string>();

  /**
   * @param run does one batch; answers, in order, each item's result or the error to reject it
   *   with. When `run` itself throws, each item of the batch is run again alone, so one item that
   *   fails cannot fail the others.
   */
  constructor(
    private readonly run: (key: string, items: In[]) => Promise<(Out | Error)[]>,
    private readonly maxBatch: number,
  ) {}

  submit(key: string, item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      const queue = this.#queues.get(key) ?? [];
      queue.push({ item, resolve, reject });
      this.#queues.set(key, queue);
      if (!this.#running.has(key)) void this.#drain(key);
    });
  }

  async #runAlone(key: string, batch: { item: In; resolve: (value: Out) => void; reject: (error: unknown) => void }[]): Promise<void> {
    for (const entry of batch) {
      try {
        const [result] = await this.run(key, [entry.item]);
        if (result instanceof Error) entry.reject(result);
        else entry.resolve(result as Out);
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
        try {
          const results = await this.run(
            key,
            batch.map((entry) => entry.item),
          );
          batch.forEach((entry, index) => {
            const result = results[index];
            if (result instanceof Error) entry.reject(result);
            else entry.resolve(result as Out);
          });
        } catch (error) {
          // One item's failure must not fail the others: each is tried again alone.
          if (batch.length === 1) (batch[0] as (typeof batch)[number]).reject(error);
          else await this.#runAlone(key, batch);
        }
      }
    } finally {
      this.#queues.delete(key);
      this.#running.delete(key);
    }
  }
}
