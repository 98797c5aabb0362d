import t from 'tap';
import { CatalogCache, etagMatches, etagOf } from '../../../../plugins/app/packs/catalog-cache.js';

const body = (text: string) => Buffer.from(text);

t.test('concurrent misses of one key share one computation', async (t) => {
  const cache = new CatalogCache({ maxEntries: 10, ttlMs: 60_000 });
  let computations = 0;
  const compute = async () => {
    computations++;
    await new Promise((resolve) => setTimeout(resolve, 20));
    return body('{"packs":[]}');
  };
  const results = await Promise.all(Array.from({ length: 50 }, () => cache.getOrCompute('list', compute)));
  t.equal(computations, 1);
  t.ok(results.every((entry) => entry === results[0]));
  t.equal(results[0]?.etag, etagOf(body('{"packs":[]}')));
  t.equal(cache.getOrCompute('list', compute), results[0], 'then served from memory, synchronously');
});

t.test('a change during a computation: its result is not stored, and later requests compute afresh', async (t) => {
  const cache = new CatalogCache({ maxEntries: 10, ttlMs: 60_000 });
  let release: () => void = () => {};
  const slow = cache.getOrCompute('list', () => new Promise<Buffer>((resolve) => (release = () => resolve(body('old')))));
  cache.invalidate();
  const fresh = cache.getOrCompute('list', async () => body('new'));
  release();
  t.equal((await slow).body.toString(), 'old', 'the request that started before the change gets what it asked for');
  t.equal((await fresh).body.toString(), 'new');
  const next = await cache.getOrCompute('list', async () => body('unused'));
  t.equal(next.body.toString(), 'new', 'only the result computed after the change was stored');
});

t.test('a failed computation is not cached', async (t) => {
  const cache = new CatalogCache({ maxEntries: 10, ttlMs: 60_000 });
  await t.rejects(Promise.resolve(cache.getOrCompute('pack|x', async () => Promise.reject(new Error('not found')))));
  t.equal((await cache.getOrCompute('pack|x', async () => body('found'))).body.toString(), 'found');
});

t.test('entries expire after the TTL', async (t) => {
  const cache = new CatalogCache({ maxEntries: 10, ttlMs: 30 });
  await cache.getOrCompute('list', async () => body('first'));
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.equal((await cache.getOrCompute('list', async () => body('second'))).body.toString(), 'second');
});

t.test('If-None-Match matching', async (t) => {
  const etag = etagOf(body('x'));
  t.ok(etagMatches(etag, etag));
  t.ok(etagMatches(`W/${etag}`, etag), 'weak comparison');
  t.ok(etagMatches(`"other", ${etag}`, etag), 'a list');
  t.ok(etagMatches('*', etag));
  t.notOk(etagMatches('"other"', etag));
  t.notOk(etagMatches(undefined, etag));
});
