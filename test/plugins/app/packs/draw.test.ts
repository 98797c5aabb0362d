import fc from 'fast-check';
import t from 'tap';
import {
  compareCodePoints,
  type DrawStep,
  drawPack,
  inDrawOrder,
  pickEntry,
  type SerialState,
  seededUniform,
  serverSeedHash,
  takeSerial,
  unmintedSerials,
  verifyDrawProof,
} from '../../../../plugins/app/packs/draw.js';

/**
 * The pure draw. The fixed vectors were computed by a separate implementation written from the
 * algorithm's description alone (Python's hmac and hashlib): they pin the algorithm, so any change
 * to it, which would break every fan's saved proof, fails here.
 */

const SEED = Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('hex');
const CLIENT_SEED = 'fan-chosen seed ✓';

const fresh = (...blocks: [number, number][]): SerialState => ({
  blocks: blocks.map(([first, count]) => ({ first, count })),
  minted: 0,
  moved: new Map(),
});

t.test('fixed vectors: the seed commitment and the uniforms', async (t) => {
  t.equal(serverSeedHash(SEED), '630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd');
  t.equal(seededUniform(SEED, `${CLIENT_SEED}:0`), 0.7828395902839373);
  t.equal(seededUniform(SEED, `${CLIENT_SEED}:1`), 0.6538431295647367);
  t.equal(seededUniform(SEED, `${CLIENT_SEED}:2`), 0.03538157862592706);
  t.equal(seededUniform(SEED, `${CLIENT_SEED}:0:serial`), 0.5245416810139447);
  t.equal(seededUniform(SEED, `${CLIENT_SEED}:1:serial`), 0.6786214211974624);
});

t.test('fixed vector: a whole open, pulls and serial positions', async (t) => {
  const result = drawPack({
    serverSeed: SEED,
    clientSeed: CLIENT_SEED,
    cardsPerPack: 5,
    // Given out of order on purpose: the draw orders the pool by collectible id.
    pool: [
      { collectibleId: 'b-rare', weight: 0.5, remaining: 2 },
      { collectibleId: 'a-common', weight: 1, remaining: 6 },
      { collectibleId: 'c-epic', weight: 2.5, remaining: 1 },
    ],
    serials: new Map([
      ['a-common', fresh([1, 4], [101, 2])],
      ['b-rare', fresh([7, 2])],
      ['c-epic', fresh([3, 1])],
    ]),
  });
  t.same(
    result.draws.map(({ k, collectibleId, unminted, position, serialNumber }) => [
      k,
      collectibleId,
      unminted,
      position,
      serialNumber,
    ]),
    [
      [0, 'c-epic', 1, 0, 3],
      [1, 'a-common', 6, 4, 101],
      [2, 'a-common', 5, 3, 1],
      [3, 'a-common', 4, 3, 102],
      [4, 'a-common', 3, 1, 2],
    ],
  );
  t.same(result.draws[0], {
    k: 0,
    u: 0.7828395902839373,
    v: 0.5245416810139447,
    collectibleId: 'c-epic',
    unminted: 1,
    position: 0,
    serialNumber: 3,
  });
  t.same(
    result.pool.map((entry) => entry.collectibleId),
    ['a-common', 'b-rare', 'c-epic'],
    'the revealed pool is in draw order, as it stood before the first draw',
  );
  t.same(
    result.poolAfter.map((entry) => [entry.collectibleId, entry.remaining]),
    [
      ['a-common', 2],
      ['b-rare', 2],
      ['c-epic', 0],
    ],
  );
  t.equal(result.serialsAfter.get('a-common')?.minted, 4);
  t.notOk(result.serialsAfter.has('b-rare'), 'an entry never drawn keeps its state');
});

t.test('pickEntry walks the running sum of weight × remaining', async (t) => {
  const pool = [
    { collectibleId: 'a', weight: 1, remaining: 1 },
    { collectibleId: 'b', weight: 1, remaining: 0 },
    { collectibleId: 'c', weight: 3, remaining: 1 },
  ];
  t.equal(pickEntry(pool, 0), 0, 'u = 0 draws the first entry with a copy');
  t.equal(pickEntry(pool, 0.2499), 0);
  t.equal(pickEntry(pool, 0.25), 2, 'a running sum equal to the target is not enough: it must exceed it');
  t.equal(pickEntry(pool, 1 - 2 ** -52), 2, 'the largest u still draws the last entry');
  t.throws(
    () => pickEntry([{ collectibleId: 'a', weight: 1, remaining: 0 }], 0.5),
    RangeError,
    'an exhausted pool draws nothing',
  );
});

t.test('code-point order differs from UTF-16 order past U+FFFF', async (t) => {
  // U+FF61 sorts before U+1F600 by code point, after it by UTF-16 unit (0xD83D < 0xFF61).
  t.ok(compareCodePoints('\uFF61', '😀') < 0);
  t.ok('\uFF61' > '😀', "JavaScript's own comparison disagrees");
  t.same(
    inDrawOrder([
      { collectibleId: '😀', weight: 1, remaining: 1 },
      { collectibleId: '\uFF61', weight: 1, remaining: 1 },
      { collectibleId: 'ab', weight: 1, remaining: 1 },
      { collectibleId: 'a', weight: 1, remaining: 1 },
    ]).map((entry) => entry.collectibleId),
    ['a', 'ab', '\uFF61', '😀'],
  );
});

t.test('takeSerial: positions outside the unminted serials are refused', async (t) => {
  const state = fresh([10, 3]);
  t.throws(() => takeSerial(state, 3), RangeError);
  t.throws(() => takeSerial(state, -1), RangeError);
  t.throws(() => takeSerial(state, 0.5), RangeError);
});

t.test('a seed that is not 64 lowercase hex characters is refused', async (t) => {
  t.throws(() => serverSeedHash(SEED.toUpperCase()), TypeError);
  t.throws(() => seededUniform(SEED.slice(2), 'x'), TypeError);
});

t.test('property: giving out every serial of an entry gives each exactly once, whatever the positions', async (t) => {
  const blocks = fc.array(fc.tuple(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 20 })), {
    minLength: 1,
    maxLength: 4,
  });
  fc.assert(
    fc.property(
      blocks,
      fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 80, maxLength: 80 }),
      (ranges, vs) => {
        // Blocks of one collectible never overlap: lay them out one after another.
        let next = 1;
        const laidOut = ranges.map(([gap, count]) => {
          const block: [number, number] = [next + (gap % 50), count];
          next = block[0] + count;
          return block;
        });
        let state = fresh(...laidOut);
        const given: number[] = [];
        for (let i = 0; unmintedSerials(state) > 0; i++) {
          const taken = takeSerial(state, Math.floor((vs[i % vs.length] as number) * unmintedSerials(state)));
          given.push(taken.serialNumber);
          state = taken.state;
        }
        const expected = laidOut.flatMap(([first, count]) => Array.from({ length: count }, (_, i) => first + i));
        return JSON.stringify([...given].sort((a, b) => a - b)) === JSON.stringify(expected) && state.moved.size === 0;
      },
    ),
  );
  t.pass('the property held for every generated case');
});

t.test(
  'property: an open takes cardsPerPack copies, only from entries with copies, each with a serial of its own',
  async (t) => {
    const pool = fc.uniqueArray(
      fc.record({
        collectibleId: fc.uuid(),
        weight: fc.double({ min: 0.001, max: 1_000_000, noNaN: true }),
        remaining: fc.integer({ min: 0, max: 30 }),
      }),
      { selector: (entry) => entry.collectibleId, minLength: 1, maxLength: 8 },
    );
    fc.assert(
      fc.property(
        pool,
        fc.integer({ min: 1, max: 10 }),
        fc.string(),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (entries, cardsPerPack, clientSeed, seed) => {
          const copies = entries.reduce((sum, entry) => sum + entry.remaining, 0);
          fc.pre(copies >= cardsPerPack);
          let first = 1;
          const serials = new Map(
            entries.map((entry) => {
              const state = fresh([first, entry.remaining]);
              first += entry.remaining;
              return [entry.collectibleId, state] as const;
            }),
          );
          const input = {
            serverSeed: Buffer.from(seed).toString('hex'),
            clientSeed,
            cardsPerPack,
            pool: entries,
            serials,
          };
          const result = drawPack(input);
          const before = new Map(entries.map((entry) => [entry.collectibleId, entry.remaining]));
          const drawnPerEntry = new Map<string, number>();
          for (const step of result.draws)
            drawnPerEntry.set(step.collectibleId, (drawnPerEntry.get(step.collectibleId) ?? 0) + 1);
          const serialNumbers = result.draws.map((step) => step.serialNumber);
          return (
            result.draws.length === cardsPerPack &&
            [...drawnPerEntry].every(([id, drawn]) => drawn <= (before.get(id) ?? 0)) &&
            result.poolAfter.every(
              (entry) =>
                entry.remaining ===
                (before.get(entry.collectibleId) ?? 0) - (drawnPerEntry.get(entry.collectibleId) ?? 0),
            ) &&
            new Set(serialNumbers).size === serialNumbers.length &&
            JSON.stringify(drawPack(input).draws) === JSON.stringify(result.draws)
          );
        },
      ),
    );
    t.pass('the property held for every generated case');
  },
);

t.test('an entry whose copies and unminted serials disagree is refused, not drawn', async (t) => {
  t.throws(
    () =>
      drawPack({
        serverSeed: SEED,
        clientSeed: 'x',
        cardsPerPack: 1,
        pool: [{ collectibleId: 'a', weight: 1, remaining: 3 }],
        serials: new Map([['a', fresh([1, 2])]]),
      }),
    RangeError,
  );
});

t.test('verifyDrawProof: an honest proof checks out; every kind of tampering is named', async (t) => {
  const pool = [
    { collectibleId: 'b-rare', weight: 0.5, remaining: 2 },
    { collectibleId: 'a-common', weight: 1, remaining: 6 },
    { collectibleId: 'c-epic', weight: 2.5, remaining: 1 },
  ];
  const opened = drawPack({
    serverSeed: SEED,
    clientSeed: CLIENT_SEED,
    cardsPerPack: 5,
    pool,
    serials: new Map([
      ['a-common', fresh([1, 4], [101, 2])],
      ['b-rare', fresh([7, 2])],
      ['c-epic', fresh([3, 1])],
    ]),
  });
  const proof = {
    serverSeed: SEED,
    serverSeedHash: serverSeedHash(SEED),
    clientSeed: CLIENT_SEED,
    pool: opened.pool,
    draws: opened.draws,
  };
  t.same(verifyDrawProof(proof), [], 'the proof of a real open checks out');
  t.same(
    verifyDrawProof({ ...proof, pool: [...proof.pool].reverse() }),
    [],
    'the order the pool is given in does not matter',
  );

  const otherSeed = 'ff'.repeat(32);
  t.match(verifyDrawProof({ ...proof, serverSeed: otherSeed }), [/serverSeedHash is not the SHA-256/, /draw 0: u is/]);
  t.match(verifyDrawProof({ ...proof, serverSeed: 'not hex' }), [/not 64 lowercase hex/]);
  t.match(verifyDrawProof({ ...proof, clientSeed: 'another' }), [/draw 0: u is/]);
  const edited = (index: number, change: Partial<DrawStep>) =>
    proof.draws.map((draw, i) => (i === index ? { ...draw, ...change } : draw));
  t.match(verifyDrawProof({ ...proof, draws: edited(1, { collectibleId: 'b-rare' }) }), [
    /draw 1: collectibleId is "b-rare", recomputed "a-common"/,
  ]);
  t.match(verifyDrawProof({ ...proof, draws: edited(2, { position: 0 }) }), [/draw 2: position is 0, recomputed 3/]);
  t.match(verifyDrawProof({ ...proof, draws: edited(3, { serialNumber: 101 }) }), [
    /serial 101 of a-common is given twice/,
  ]);
  t.match(
    verifyDrawProof({
      ...proof,
      pool: proof.pool.map((entry) => ({
        ...entry,
        remaining: entry.collectibleId === 'c-epic' ? 5 : entry.remaining,
      })),
    }),
    [/draw 0: unminted is 1, recomputed 5/],
  );
  t.match(verifyDrawProof({ ...proof, pool: [{ collectibleId: 'a-common', weight: 1, remaining: 2 }] }), [
    /cannot give 5 draws/,
  ]);
});
