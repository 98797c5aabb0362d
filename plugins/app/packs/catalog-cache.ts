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

  get generation(): number {
    return this.#generation;
  }

  get(key: string): CachedResponse | undefined {
    return this.#entries.get(key);
  }

  /** Stores `body` unless the catalog changed since `generation` was read. */
  set(key: string, generation: number, body: Buffer): CachedResponse {
    const entry = { body, etag: etagOf(body) };
    if (generation === this.#generation) this.#entries.set(key, entry);
    return entry;
  }

  invalidate(): void {
    this.#generation++;
    this.#entries.clear();
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
