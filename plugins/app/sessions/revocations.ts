/**
 * The revoked set every instance holds in memory, so that checking a token costs a map lookup,
 * not a query. Entries are kept only while a token they refuse could still be valid, and are
 * kept in step across instances by the bus (PostgreSQL LISTEN/NOTIFY, or Redis pub/sub).
 */

export interface RevocationEntry {
  key: string;
  /** Epoch milliseconds after which no token this entry refuses can still be valid. */
  until: number;
}

export class RevocationList {
  private readonly entries = new Map<string, number>();
  private hashes = 0;

  add(entry: RevocationEntry, now = Date.now()): void {
    if (entry.until <= now) return;
    const known = this.entries.get(entry.key);
    if (known === undefined && entry.key.startsWith('sha256:')) this.hashes += 1;
    if (known === undefined || known < entry.until) this.entries.set(entry.key, entry.until);
  }

  has(key: string, now = Date.now()): boolean {
    const until = this.entries.get(key);
    return until !== undefined && until > now;
  }

  /** Whether any token hash is listed: without one, tokens without `jti` need not be hashed. */
  get holdsHashes(): boolean {
    return this.hashes > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  prune(now = Date.now()): void {
    for (const [key, until] of this.entries) {
      if (until > now) continue;
      this.entries.delete(key);
      if (key.startsWith('sha256:')) this.hashes -= 1;
    }
  }
}

/** A bus message: one or more entries, as JSON. Anything else on the channel is ignored. */
export function encodeEntries(entries: RevocationEntry[]): string {
  return JSON.stringify(entries.map((entry) => [entry.key, entry.until]));
}

export function decodeEntries(payload: string): RevocationEntry[] {
  try {
    const value = JSON.parse(payload);
    if (!Array.isArray(value)) return [];
    return value
      .filter(
        (item): item is [string, number] =>
          Array.isArray(item) && typeof item[0] === 'string' && Number.isFinite(item[1]),
      )
      .map(([key, until]) => ({ key, until }));
  } catch {
    return [];
  }
}
