/**
 * `load`, with each key's answer reused for `ms` (0: never reused). A bounded memory: past
 * `maxEntries` keys it starts over. For reads every request makes of something that changes
 * rarely (what a board is), where an answer `ms` old is acceptable.
 */
export function remembered<V>(
  ms: number,
  maxEntries: number,
  load: (key: string) => Promise<V>,
): (key: string) => Promise<V> {
  const answers = new Map<string, { expires: number; value: V }>();
  return async (key) => {
    const known = answers.get(key);
    if (known && known.expires > Date.now()) return known.value;
    const value = await load(key);
    if (ms > 0) {
      if (answers.size >= maxEntries) answers.clear();
      answers.set(key, { expires: Date.now() + ms, value });
    }
    return value;
  };
}
