/**
 * `load`, with each key's answer reused for `ms` (0: never reused); `args` reach `load` only
 * when it runs (what the key alone does not carry, e.g. who asked first). Callers asking for a key
 * while it loads share that one load, so a burst of identical reads costs one. A bounded memory:
 * past `maxEntries` keys it starts over; a failed load is not kept. For reads every request makes
 * of something that changes rarely, or that says how old it is, where an answer `ms` old is
 * acceptable.
 */
export function remembered<V, Args extends unknown[] = []>(
  ms: number,
  maxEntries: number,
  load: (key: string, ...args: Args) => Promise<V>,
): (key: string, ...args: Args) => Promise<V> {
  const answers = new Map<string, { expires: number; value: Promise<V> }>();
  return (key, ...args) => {
    const known = answers.get(key);
    if (known && known.expires > Date.now()) return known.value;
    const value = load(key, ...args);
    if (ms > 0) {
      if (answers.size >= maxEntries) answers.clear();
      // Shared while it loads; kept `ms` from when it arrived.
      const entry = { expires: Number.POSITIVE_INFINITY, value };
      answers.set(key, entry);
      value.then(
        () => {
          entry.expires = Date.now() + ms;
        },
        () => {
          if (answers.get(key) === entry) answers.delete(key);
        },
      );
    }
    return value;
  };
}
