import t from 'tap';
import { type SerialState, takeSerial } from '../../../../plugins/app/packs/draw.js';
import { activeBlocks, movesChanged, placesRead, serialsToAllocate } from '../../../../plugins/app/packs/serials.js';

t.test('serials to allocate cover every copy an entry can still draw, once', async (t) => {
  t.equal(serialsToAllocate({ minted: 0, allocated: 0 }, 10), 10, 'first publish');
  t.equal(serialsToAllocate({ minted: 4, allocated: 10 }, 6), 0, 'published again unchanged');
  t.equal(serialsToAllocate({ minted: 4, allocated: 10 }, 9), 3, 'copies added in the draft');
  t.equal(serialsToAllocate({ minted: 4, allocated: 10 }, 2), 0, 'copies removed: nothing new, the rest set aside');
});

t.test('active blocks are the first places of the blocks, in allocation order', async (t) => {
  const blocks = [
    { first: 11, count: 5 },
    { first: 40, count: 3 },
  ];
  t.same(activeBlocks(blocks, 8), blocks);
  t.same(activeBlocks(blocks, 6), [
    { first: 11, count: 5 },
    { first: 40, count: 1 },
  ]);
  t.same(activeBlocks(blocks, 2), [{ first: 11, count: 2 }]);
  t.same(activeBlocks(blocks, 0), []);
  t.throws(() => activeBlocks(blocks, 9), RangeError, 'more places than serials is a bug, not a draw');
});

t.test('places read are exactly the places takeSerial reads', async (t) => {
  const draws = [
    { collectibleId: 'a', position: 3 },
    { collectibleId: 'b', position: 0 },
    { collectibleId: 'a', position: 1 },
  ];
  const places = placesRead(
    draws,
    new Map([
      ['a', 2],
      ['b', 0],
    ]),
  );
  t.same([...(places.get('a') ?? [])].sort(), [2, 3, 4, 5], 'a: first unminted 2 and 2+3, then 3 and 3+1');
  t.same([...(places.get('b') ?? [])], [0]);

  // Replaying with only those places loaded gives the same serials as with everything loaded.
  const blocks = [{ first: 1, count: 10 }];
  const full = new Map([
    [2, 9],
    [3, 7],
    [5, 3],
    [8, 4],
  ]);
  const partial = new Map([...full].filter(([place]) => places.get('a')?.has(place)));
  let fullState: SerialState = { blocks, minted: 2, moved: full };
  let partialState: SerialState = { blocks, minted: 2, moved: partial };
  for (const position of [3, 1]) {
    const a = takeSerial(fullState, position);
    const b = takeSerial(partialState, position);
    t.equal(b.serialNumber, a.serialNumber);
    fullState = a.state;
    partialState = b.state;
  }
});

t.test('moves changed: what to write and what to forget', async (t) => {
  const before = new Map([
    [2, 9],
    [3, 7],
  ]);
  const after = new Map([
    [3, 7],
    [5, 2],
  ]);
  t.same(movesChanged(before, after), { set: [[5, 2]], removed: [2] });
  t.same(movesChanged(before, before), { set: [], removed: [] });
});
