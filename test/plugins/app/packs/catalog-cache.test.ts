import t from 'tap';
import {
  CatalogCache,
  decodeChange,
  encodeChange,
  etagMatches,
  etagOf,
  listKey,
  packKey,
} from '../../../../plugins/app/packs/catalog-cache.js';

const body = (text: string) => Buffer.from(text);

t.test('concurrent misses of one key share one computation', async (t) => {
  const cache = new CatalogCache({ maxBytes: 1_000_000, ttlMs: 60_000 });
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
  const cache = new CatalogCache({ maxBytes: 1_000_000, ttlMs: 60_000 });
  let release: () => void = () => {};
  const slow = cache.getOrCompute(
    'list',
    () => new Promise<Buffer>((resolve) => (release = () => resolve(body('old')))),
  );
  cache.invalidate();
  const fresh = cache.getOrCompute('list', async () => body('new'));
  release();
  t.equal((await slow).body.toString(), 'old', 'the request that started before the change gets what it asked for');
  t.equal((await fresh).body.toString(), 'new');
  const next = await cache.getOrCompute('list', async () => body('unused'));
  t.equal(next.body.toString(), 'new', 'only the result computed after the change was stored');
});

t.test('a failed computation is not cached', async (t) => {
  const cache = new CatalogCache({ maxBytes: 1_000_000, ttlMs: 60_000 });
  await t.rejects(Promise.resolve(cache.getOrCompute('pack|x', async () => Promise.reject(new Error('not found')))));
  t.equal((await cache.getOrCompute('pack|x', async () => body('found'))).body.toString(), 'found');
});

t.test('entries expire after the TTL', async (t) => {
  const cache = new CatalogCache({ maxBytes: 1_000_000, ttlMs: 30 });
  await cache.getOrCompute('list', async () => body('first'));
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.equal((await cache.getOrCompute('list', async () => body('second'))).body.toString(), 'second');
});

t.test('the cache is bounded in bytes, whatever the number of keys (forged cursors)', async (t) => {
  const cache = new CatalogCache({ maxBytes: 100_000, ttlMs: 60_000 });
  const page = Buffer.alloc(10_000, 'x');
  for (let i = 0; i < 1000; i++)
    await cache.getOrCompute(listKey({ limit: 100, cursor: `forged-${i}` }), async () => page);
  t.ok(cache.size <= 100_000, `holds ${cache.size} bytes`);
  t.ok(cache.has(listKey({ limit: 100, cursor: 'forged-999' })), 'the newest pages stay');
  t.notOk(cache.has(listKey({ limit: 100, cursor: 'forged-0' })), 'the oldest were evicted');
  await cache.getOrCompute('huge', async () => Buffer.alloc(200_000));
  t.notOk(cache.has('huge'), 'a response larger than the whole cache is served, not kept');
});

t.test('a change drops only what it affects', async (t) => {
  const cache = new CatalogCache({ maxBytes: 1_000_000, ttlMs: 60_000 });
  const fill = async () => {
    for (const key of [listKey({ limit: 100 }), listKey({ limit: 10, teamId: 't' }), packKey('a'), packKey('b')]) {
      await cache.getOrCompute(key, async () => body(key));
    }
  };
  await fill();
  cache.invalidate({ lists: false, packIds: [] });
  t.ok(
    [listKey({ limit: 100 }), packKey('a'), packKey('b')].every((key) => cache.has(key)),
    'a change of a draft drops nothing',
  );
  cache.invalidate({ lists: false, packIds: ['a'] });
  t.notOk(cache.has(packKey('a')), 'the detail of the changed pack is dropped');
  t.ok(cache.has(packKey('b')) && cache.has(listKey({ limit: 100 })), 'the rest stays');
  await fill();
  cache.invalidate({ lists: true, packIds: ['b'] });
  t.notOk(
    cache.has(listKey({ limit: 100 })) || cache.has(listKey({ limit: 10, teamId: 't' })),
    'every list page is dropped',
  );
  t.notOk(cache.has(packKey('b')));
  t.ok(cache.has(packKey('a')), 'other details stay');
  cache.invalidate('all');
  t.notOk(cache.has(packKey('a')), 'all: everything');
});

t.test('change notifications round-trip, and anything unreadable means everything', async (t) => {
  t.same(decodeChange(encodeChange('me', { lists: true, packIds: ['a', 'b'] })), {
    from: 'me',
    change: { lists: true, packIds: ['a', 'b'] },
  });
  t.same(decodeChange(encodeChange('me', 'all')), { from: 'me', change: 'all' });
  const many = Array.from({ length: 500 }, (_, i) => `pack-${i}`);
  t.same(
    decodeChange(encodeChange('me', { lists: false, packIds: many })).change,
    'all',
    'too many packs to name: all',
  );
  t.ok(
    encodeChange('me', { lists: true, packIds: many.slice(0, 100).map((id) => id.padEnd(36, 'x')) }).length < 8000,
    'within NOTIFY limits',
  );
  for (const payload of [
    '',
    'instance-id',
    '{"change":{"lists":"yes","packIds":[]}}',
    '{"change":{"lists":true,"packIds":[1]}}',
    'null',
  ]) {
    t.equal(decodeChange(payload).change, 'all', JSON.stringify(payload));
  }
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
