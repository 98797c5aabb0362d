import t from 'tap';
import { serverSeedHash } from '../../../../plugins/app/packs/draw.js';
import {
  adminSourceKey,
  assertStock,
  bundleOf,
  coinsToTakeBack,
  copiesFor,
  inScope,
  packsFor,
} from '../../../../plugins/app/rewards/rules.js';
import { drawRewardSerials } from '../../../../plugins/app/rewards/serials.js';

/** The pure rules of rewards: bundles, scope, stock, what a revocation takes back, and the serial draws. */

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

t.test('a bundle gives something, and names each item once', async (t) => {
  t.same(bundleOf({ coins: 5 }), { coins: 5, packs: [], collectibles: [] });
  t.equal(
    codeOf(() => bundleOf({})),
    'reward_empty',
  );
  t.equal(
    codeOf(() => bundleOf({ coins: 0, packs: [], collectibles: [] })),
    'reward_empty',
  );
  t.equal(
    codeOf(() =>
      bundleOf({
        packs: [
          { packId: 'a', count: 1 },
          { packId: 'a', count: 1 },
        ],
      }),
    ),
    'validation_failed',
  );
  t.equal(
    codeOf(() =>
      bundleOf({
        collectibles: [
          { collectibleId: 'c', count: 1 },
          { collectibleId: 'c', count: 3 },
        ],
      }),
    ),
    'validation_failed',
  );
  t.same(
    bundleOf({ packs: [{ packId: 'a', count: 1 }], collectibles: [{ collectibleId: 'a', count: 1 }] }).packs,
    [{ packId: 'a', count: 1 }],
    'a pack and a collectible may share an id',
  );
});

t.test("scope: a platform reward holds anything, a team's its own", async (t) => {
  t.ok(inScope(null, null));
  t.ok(inScope(null, 'team-a'));
  t.ok(inScope('team-a', 'team-a'));
  t.notOk(inScope('team-a', 'team-b'));
  t.notOk(inScope('team-a', null));
});

t.test('needs: per grant count, in id order', async (t) => {
  t.same(
    packsFor(
      [
        { packId: 'b', count: 2 },
        { packId: 'a', count: 1 },
      ],
      3,
    ),
    [
      { packId: 'a', count: 3 },
      { packId: 'b', count: 6 },
    ],
  );
  t.same(copiesFor([{ collectibleId: 'x', count: 2 }], 5), [{ collectibleId: 'x', count: 10 }]);
  t.equal(adminSourceKey('launch', 'fan-1'), 'admin:launch:fan-1');
});

t.test('stock: sold, granted, reserved and promised packs hold the supply and the pool', async (t) => {
  const stock = {
    cardsPerPack: 2,
    supply: 10,
    sold: 2,
    opened: 1,
    reserved: 1,
    granted: 2,
    promised: 3,
    remaining: 40,
  };
  t.equal(
    codeOf(() => assertStock('p', stock, 2)),
    undefined,
    '10 - 8 = 2 left',
  );
  t.equal(
    codeOf(() => assertStock('p', stock, 3)),
    'reward_stock_insufficient',
  );
  t.equal(
    codeOf(() => assertStock('p', { ...stock, supply: null, remaining: 18 }, 1)),
    undefined,
    'the pool fills 9 packs: 3 unopened, 1 reserved, 3 promised, so 2 left',
  );
  t.equal(
    codeOf(() => assertStock('p', { ...stock, supply: null, remaining: 16 }, 2)),
    'reward_stock_insufficient',
  );
});

t.test('revocation takes back what the wallet holds, never below zero', async (t) => {
  t.same(coinsToTakeBack(100, 250), { take: 100, uncollected: 0 });
  t.same(coinsToTakeBack(100, 30), { take: 30, uncollected: 70 });
  t.same(coinsToTakeBack(100, 0), { take: 0, uncollected: 100 });
  t.same(coinsToTakeBack(0, 10), { take: 0, uncollected: 0 });
});

t.test('serial draws: each serial of the block once, recomputable, and the block state carried over', async (t) => {
  const serverSeed = 'ab'.repeat(32);
  const block = { first: 11, size: 6, minted: 0, moved: {}, serverSeed, serverSeedHash: serverSeedHash(serverSeed) };
  const first = drawRewardSerials(block, 'card', 'quest:q:1:fan-1', 2);
  const second = drawRewardSerials(first.block, 'card', 'quest:q:1:fan-2', 4);
  const serials = [...first.serials, ...second.serials].map((drawn) => drawn.serialNumber);
  t.same(
    [...serials].sort((a, b) => a - b),
    [11, 12, 13, 14, 15, 16],
  );
  t.equal(second.block.minted, 6);
  t.same(drawRewardSerials(block, 'card', 'quest:q:1:fan-1', 2).serials, first.serials, 'deterministic');
  t.same(
    first.serials.map((drawn) => [drawn.unminted, drawn.position === Math.floor(drawn.v * drawn.unminted)]),
    [
      [6, true],
      [5, true],
    ],
  );
  t.throws(() => drawRewardSerials(second.block, 'card', 'quest:q:1:fan-3', 1), RangeError, 'an exhausted block');
});
