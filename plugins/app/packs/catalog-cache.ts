import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Database } from '../database/index.js';

/**
 * Serialized public catalog responses (GET /api/packs, GET /api/packs/{id}), kept in memory so
 * the hot read path is a map lookup and a buffer write. A change drops only the responses it can
 * affect (a draft is in none): through this instance right after its commit, on other instances
 * when the NOTIFY sent by its transaction arrives, and everything when that channel may have
 * missed a change. Entries expire after `ttlMs` at the latest: the bound for `available`, which
 * sales change without a catalog edit.
 */

/** Which public responses a change can affect. */
export type CatalogChange =
  /** The pack lists (membership, order or fields of active packs) and/or the detail of some packs. */
  | { lists: boolean; packIds: readonly string[] }
  /** Everything (a missed notification, or more packs than a notification should name). */
  | 'all';

/** How a change of the public catalog reaches the caches: inside the transaction, then after it. */
export interface CatalogEvents {
  /** Inside the transaction: tells other instances (delivered only if it commits). */
  notify(tx: Database, change: CatalogChange): Promise<void>;
  /** After the commit: drops this instance's affected responses. */
  invalidateLocal(change: CatalogChange): void;
  /** The active packs whose public odds show the collectible: what a change of it affects. */
  activePacksHolding(tx: Database, collectibleId: string): Promise<string[]>;
}

export const listKey = (query: { limit: number; cursor?: string; teamId?: string }) =>
  `list|${query.limit}|${query.cursor ?? ''}|${query.teamId ?? ''}`;
export const packKey = (packId: string) => `pack|${packId}`;

/** Whether a change affects anything public. */
export const isPublicChange = (change: CatalogChange) => change === 'all' || change.lists || change.packIds.length > 0;

/** A NOTIFY payload stays far below PostgreSQL's 8,000 bytes: past this many packs, say "all". */
const MAX_NOTIFIED_PACKS = 100;

/** The NOTIFY payload of a change, naming the instance that made it. */
export function encodeChange(from: string, change: CatalogChange): string {
  const sent = change !== 'all' && change.packIds.length > MAX_NOTIFIED_PACKS ? 'all' : change;
  return JSON.stringify({ from, change: sent });
}

/** A payload that does not parse (another version of the service) drops everything. */
export function decodeChange(payload: string): { from?: string; change: CatalogChange } {
  try {
    const message = JSON.parse(payload) as { from?: unknown; change?: unknown };
    const change = message.change as { lists?: unknown; packIds?: unknown } | 'all';
    const valid =
      change === 'all' ||
      (typeof change === 'object' &&
        change !== null &&
        typeof change.lists === 'boolean' &&
        Array.isArray(change.packIds) &&
        change.packIds.every((id) => typeof id === 'string'));
    return {
      from: typeof message.from === 'string' ? message.from : undefined,
      change: valid ? (change as CatalogChange) : 'all',
    };
  } catch {
    return { change: 'all' };
  }
}

export interface CachedResponse {
  body: Buffer;
  etag: string;
}

/** The ETag, the map entry and the LRU's bookkeeping, roughly. */
const ENTRY_OVERHEAD_BYTES = 200;

/** Request URLs whose response is known, for answering them before parsing and validation. */
const URL_INDEX_BYTES = 2 * 1024 * 1024;

/** How long a cached public response may be served: the staleness bound of `available`. */
export const CATALOG_CACHE_TTL_MS = 5000;
/** The Cache-Control of public catalog responses: shared caches may keep them as long as we do. */
export const CATALOG_CACHE_CONTROL = `public, max-age=${CATALOG_CACHE_TTL_MS / 1000}`;

export class CatalogCache {
  readonly #entries: LRUCache<string, CachedResponse>;
  /** request URL → cache key, for URLs already answered through validation and the handler. */
  readonly #urls = new LRUCache<string, string>({
    maxSize: URL_INDEX_BYTES,
    sizeCalculation: (key, url) => url.length + key.length + 64,
  });
  /** Bumped by every invalidation, so a response computed before a change is never stored after it. */
  #generation = 0;

  /** Bounded in bytes, not entries: every forged cursor is a new key, and a page can be large. */
  constructor(options: { maxBytes: number; ttlMs: number }) {
    this.#entries = new LRUCache({
      maxSize: options.maxBytes,
      sizeCalculation: (entry, key) => entry.body.length + key.length + ENTRY_OVERHEAD_BYTES,
      ttl: options.ttlMs,
    });
  }

  /** Bytes held, as counted against `maxBytes`. */
  get size(): number {
    return this.#entries.calculatedSize;
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

  invalidate(change: CatalogChange = 'all'): void {
    if (!isPublicChange(change)) return;
    this.#generation++;
    // Requests after a change never wait on a computation that started before it.
    this.#inFlight.clear();
    if (change === 'all') {
      this.#entries.clear();
      return;
    }
    for (const packId of change.packIds) this.#entries.delete(packKey(packId));
    if (change.lists) {
      for (const key of [...this.#entries.keys()]) if (key.startsWith('list|')) this.#entries.delete(key);
    }
  }

  /**
   * Remembers that `url` (path and query as sent) was answered with `key`'s response: the same
   * URL validates the same way, so a later request for it can be answered from the cache alone.
   */
  rememberUrl(url: string, key: string): void {
    if (this.#urls.get(url) !== key) this.#urls.set(url, key);
  }

  /** The cached response for a URL answered before, if it is still cached. */
  forUrl(url: string): CachedResponse | undefined {
    const key = this.#urls.get(url);
    return key === undefined ? undefined : this.#entries.get(key);
  }

  /** Whether a response for `key` is cached. */
  has(key: string): boolean {
    return this.#entries.has(key);
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
