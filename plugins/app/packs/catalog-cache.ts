import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Database } from '../db.js';

/**
 * Serialized public catalog responses (GET /api/packs, GET /api/packs/{id}), kept in memory so
 * the hot read path is a map lookup and a buffer write. Entries are dropped on every catalog
 * change made through this instance (after its commit), on every change announced by another
 * instance (PostgreSQL NOTIFY), and at the latest after `ttlMs` (the bound for `available`,
 * which purchases change without a catalog edit, and for a lost LISTEN connection).
 */

/** How a change of the public catalog reaches the caches: inside the transaction, then after it. */
export interface CatalogEvents {
  /** Inside the transaction: tells other instances (delivered only if it commits). */
  notify(tx: Database): Promise<void>;
  /** After the commit: drops this instance's cached responses. */
  invalidateLocal(): void;
}

export interface CachedResponse {
  body: Buffer;
  etag: string;
}

export class CatalogCache {
  readonly #entries: LRUCache<string, CachedResponse>;
  /** Bumped by every invalidation, so a response computed before a change is never stored after it. */
  #generation = 0;

  constructor(options: { maxEntries: number; ttlMs: number }) {
    this.#entries = new LRUCache({ max: options.maxEntries, ttl: options.ttlMs });
  }

  /** Computations under way, so concurrent misses of one key (an expiry under load) run one query. */
  readonly #inFlight = new Map<string, Promise<CachedResponse>>();

  /**
   * The cached response for `key`, or the result of `compute` (shared by every request that
   * misses meanwhile), stored unless the catalog changed while it was computed.
   */
  getOrCompute(key: string, compute: () => Promise<Buffer>): CachedResponse | Promise<CachedResponse> {
    const cached = this.#entries.get(key);
    if (cached) return cached;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      const generation = this.#generation;
      pending = compute()
        .then((body) => {
          const entry = { body, etag: etagOf(body) };
          if (generation === this.#generation) this.#entries.set(key, entry);
          return entry;
        })
        .finally(() => {
          if (this.#inFlight.get(key) === pending) this.#inFlight.delete(key);
        });
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  invalidate(): void {
    this.#generation++;
    this.#entries.clear();
    // Requests after a change never wait on a computation that started before it.
    this.#inFlight.clear();
  }
}

export function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/** Whether an If-None-Match header matches the ETag (a list, `*`, or weak validators). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}
