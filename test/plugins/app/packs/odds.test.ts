import fc from 'fast-check';
import t from 'tap';
import { availablePacks, canFillOnePack, drawOdds, totalRemaining } from '../../../../plugins/app/packs/odds.js';

const entry = fc.record({
  collectibleId: fc.uuid(),
  weight: fc.double({ min: 0.001, max: 1_000_000, noNaN: true }),
  remaining: fc.integer({ min: 0, max: 1_000_000 }),
});
const pool = fc.array(entry, { minLength: 1, maxLength: 30 }).filter((p) => p.some((e) => e.remaining > 0));

t.test('worked example: weights 1 and 3, 10 and 5 copies', async (t) => {
  const odds = drawOdds([
    { collectibleId: 'a', weight: 1, remaining: 10 },
    { collectibleId: 'b', weight: 3, remaining: 5 },
  ]);
  t.equal(odds[0]?.probability, 10 / 25);
  t.equal(odds[1]?.probability, 15 / 25);
});

t.test('equal weights: odds are the share of copies (a fair shuffle)', async (t) => {
  const odds = drawOdds([
    { collectibleId: 'common', weight: 1, remaining: 99 },
    { collectibleId: 'rare', weight: 1, remaining: 1 },
  ]);
  t.equal(odds[1]?.probability, 0.01);
});

t.test('an empty or exhausted pool has zero odds everywhere', async (t) => {
  t.same(drawOdds([]), []);
  t.same(
    drawOdds([{ collectibleId: 'a', weight: 5, remaining: 0 }]).map((o) => o.probability),
    [0],
  );
});

t.test('property: odds sum to 1', async (t) => {
  fc.assert(fc.property(pool, (p) => Math.abs(drawOdds(p).reduce((sum, o) => sum + o.probability, 0) - 1) < 1e-9));
  t.pass();
});

t.test('property: odds are proportional to weight x remaining', async (t) => {
  fc.assert(
    fc.property(pool, (p) => {
      const odds = drawOdds(p);
      const total = p.reduce((sum, e) => sum + e.weight * e.remaining, 0);
      return odds.every((o) => Math.abs(o.probability - (o.weight * o.remaining) / total) < 1e-12);
    }),
  );
  t.pass();
});

t.test('property: the order of the pool does not change any entry’s odds', async (t) => {
  fc.assert(
    fc.property(
      pool.chain((p) => fc.tuple(fc.constant(p), fc.shuffledSubarray(p, { minLength: p.length, maxLength: p.length }))),
      ([p, shuffled]) => {
        const byIdentity = new Map(drawOdds(p).map((o, i) => [p[i], o.probability]));
        return drawOdds(shuffled).every(
          (o, i) => Math.abs((byIdentity.get(shuffled[i]) ?? -1) - o.probability) < 1e-12,
        );
      },
    ),
  );
  t.pass();
});

t.test('canFillOnePack and totalRemaining', async (t) => {
  const p = [
    { collectibleId: 'a', weight: 1, remaining: 3 },
    { collectibleId: 'b', weight: 2, remaining: 2 },
  ];
  t.equal(totalRemaining(p), 5);
  t.ok(canFillOnePack(p, 5));
  t.notOk(canFillOnePack(p, 6));
  t.notOk(canFillOnePack([], 1));
});

t.test('availablePacks', async (t) => {
  const base = {
    totalRemaining: 100,
    cardsPerPack: 5,
    supply: null,
    sold: 0,
    granted: 0,
    opened: 0,
    reserved: 0,
    promised: 0,
  };
  t.equal(availablePacks(base), 20);
  t.equal(availablePacks({ ...base, totalRemaining: 104 }), 20, 'floor');
  t.equal(availablePacks({ ...base, sold: 3, reserved: 2 }), 15, 'outstanding packs hold their copies');
  t.equal(
    availablePacks({ ...base, sold: 2, granted: 2, opened: 1, promised: 2 }),
    15,
    'granted and promised packs too',
  );
  t.equal(availablePacks({ ...base, supply: 10, granted: 3, promised: 4 }), 3, 'and count against the supply');
  t.equal(availablePacks({ ...base, supply: 10 }), 10, 'capped by supply');
  t.equal(availablePacks({ ...base, supply: 10, sold: 8, reserved: 1 }), 1);
  t.equal(availablePacks({ ...base, supply: 10, sold: 12 }), 0, 'never negative');
  t.equal(availablePacks({ ...base, totalRemaining: 4 }), 0);
});

t.test('property: availablePacks never promises more packs than the pool can fill', async (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 10_000 }),
      fc.integer({ min: 1, max: 100 }),
      fc.option(fc.integer({ min: 1, max: 1000 }), { nil: null }),
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 0, max: 50 }),
      (remaining, cardsPerPack, supply, unopened, reserved) => {
        const available = availablePacks({
          totalRemaining: remaining,
          cardsPerPack,
          supply,
          sold: unopened,
          granted: 0,
          opened: 0,
          reserved,
          promised: 0,
        });
        const copiesNeeded = (available + unopened + reserved) * cardsPerPack;
        return (
          available >= 0 && (available === 0 || copiesNeeded <= remaining) && (supply === null || available <= supply)
        );
      },
    ),
  );
  t.pass();
});
