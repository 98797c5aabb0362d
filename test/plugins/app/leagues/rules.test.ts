import { createHash } from 'node:crypto';
import t from 'tap';
import {
  bandSize,
  canonicalStandingLine,
  checkLineup,
  formatPoints,
  type LineupCopy,
  lineupScore,
  multipliersInHundredths,
  notOwned,
  notOwnedDetails,
  parsePoints,
  playOverlaps,
  pointsFromApi,
  pointsToApi,
  prizeBandFor,
  rankStandings,
  roundStatusAt,
  type StandingEntry,
  standingLineFromApi,
  standingsHash,
  validateLeagueRules,
  validatePrizes,
  validateRoundTimes,
  winners,
} from '../../../../plugins/app/leagues/rules.js';
import type { Rarity } from '../../../../schemas/enums.js';
import type { LeagueRules, PrizeBand } from '../../../../schemas/leagues.js';

const rules = (overrides: Partial<LeagueRules> = {}): LeagueRules => ({ lineupSize: 3, eligible: {}, ...overrides });

// --- Rules ----------------------------------------------------------------------------------

t.test('validateLeagueRules: two decimals at most, caps within the lineup, teams once', async (t) => {
  t.same(validateLeagueRules(rules()), []);
  t.same(
    validateLeagueRules(
      rules({
        multipliers: { common: 0.01, uncommon: 1.15, rare: 2.05, epic: 99.99, legendary: 100 },
        rarityCaps: { legendary: 0, epic: 3 },
        eligible: { teamIds: ['team-1', 'team-2'], minRarity: 'rare' },
      }),
    ),
    [],
    '0.01, 1.15, 2.05, 99.99 and 100 are exact in hundredths; a cap of 0 or of lineupSize is fine',
  );
  t.same(validateLeagueRules(rules({ multipliers: { rare: 2.005 } })), [
    { path: '/rules/multipliers/rare', message: 'must be 0.01 to 100 with at most two decimals' },
  ]);
  t.same(validateLeagueRules(rules({ multipliers: { epic: 1.001 }, rarityCaps: { legendary: 4 } }), '/body/rules'), [
    { path: '/body/rules/multipliers/epic', message: 'must be 0.01 to 100 with at most two decimals' },
    { path: '/body/rules/rarityCaps/legendary', message: 'must be at most lineupSize (3)' },
  ]);
  t.same(
    validateLeagueRules(
      rules({ multipliers: { common: 0, uncommon: 100.01, rare: Number.NaN, epic: 1.00001, legendary: 0.005 } }),
    ).map((p) => p.path),
    [
      '/rules/multipliers/common',
      '/rules/multipliers/uncommon',
      '/rules/multipliers/rare',
      '/rules/multipliers/epic',
      '/rules/multipliers/legendary',
    ],
    'out of range, not a number, or a fraction of a hundredth however small',
  );
  t.same(validateLeagueRules(rules({ eligible: { teamIds: ['a', 'b', 'a', 'a'] } })), [
    { path: '/rules/eligible/teamIds/2', message: 'listed twice' },
    { path: '/rules/eligible/teamIds/3', message: 'listed twice' },
  ]);
});

t.test('multipliersInHundredths: exact integers, 100 when missing', async (t) => {
  t.same(multipliersInHundredths(rules()), { common: 100, uncommon: 100, rare: 100, epic: 100, legendary: 100 });
  t.same(multipliersInHundredths(rules({ multipliers: { uncommon: 1.15, rare: 0.01, legendary: 2.3 } })), {
    common: 100,
    uncommon: 115,
    rare: 1,
    epic: 100,
    legendary: 230,
  });
  t.ok(Object.values(multipliersInHundredths(rules({ multipliers: { epic: 0.29 } }))).every(Number.isInteger));
});

// --- Lineups --------------------------------------------------------------------------------

const copy = (pullId: string, rarity: Rarity = 'common', teamId: string | null = 'team-1'): LineupCopy => ({
  pullId,
  collectibleId: `collectible-of-${pullId}`,
  teamId,
  rarity,
});

t.test('checkLineup: a valid lineup has no problems', async (t) => {
  const copies = [copy('p1'), copy('p2', 'rare'), copy('p3', 'legendary')];
  t.same(checkLineup({ rules: rules(), leagueTeamId: 'team-1', pullIds: ['p3', 'p1', 'p2'], copies }), {
    notOwned: [],
    invalid: [],
  });
});

t.test('checkLineup: one detail per offending position', async (t) => {
  const copies = [copy('p1'), copy('p2', 'common', 'team-2'), copy('p3', 'common', null), copy('p4')];
  const check = checkLineup({
    rules: rules({ lineupSize: 5 }),
    leagueTeamId: 'team-1',
    pullIds: ['p1', 'p1', 'x', 'p2', 'p3', 'p4', 'x'],
    copies,
  });
  t.same(check.notOwned, [2], 'the first x only: its repeat is reported as a repeat');
  t.same(check.invalid, [
    { path: '/pullIds', message: 'must hold exactly 5 copies (7 given)' },
    { path: '/pullIds/1', message: 'listed twice' },
    { path: '/pullIds/3', message: "its team's collectibles are not eligible" },
    { path: '/pullIds/4', message: "its team's collectibles are not eligible" },
    { path: '/pullIds/6', message: 'listed twice' },
  ]);
  t.same(notOwnedDetails(check.notOwned), [{ path: '/pullIds/2', message: 'not a copy you own' }]);
  t.same(notOwned(['x', 'p1', 'y'], copies), [0, 2]);
  t.same(notOwned([], copies), []);
});

t.test('checkLineup: eligible teams and minimum rarity', async (t) => {
  const copies = [copy('p1', 'common', 'team-2'), copy('p2', 'rare', 'team-3'), copy('p3', 'epic', 'team-1')];
  const check = checkLineup({
    rules: rules({ eligible: { teamIds: ['team-2', 'team-3'], minRarity: 'rare' } }),
    leagueTeamId: 'team-1',
    pullIds: ['p1', 'p2', 'p3'],
    copies,
  });
  t.same(check, {
    notOwned: [],
    invalid: [
      { path: '/pullIds/0', message: 'must be rare or rarer' },
      { path: '/pullIds/2', message: "its team's collectibles are not eligible" },
    ],
  });
  t.same(
    checkLineup({
      rules: rules({ lineupSize: 2, eligible: { minRarity: 'legendary' } }),
      leagueTeamId: 'team-1',
      pullIds: ['a', 'b'],
      copies: [copy('a', 'legendary'), copy('b', 'epic')],
    }).invalid,
    [{ path: '/pullIds/1', message: 'must be legendary or rarer' }],
  );
});

t.test('checkLineup: rarity caps name the positions past the cap, a cap of 0 refuses all', async (t) => {
  const copies = [copy('l1', 'legendary'), copy('l2', 'legendary'), copy('e1', 'epic'), copy('l3', 'legendary')];
  const check = checkLineup({
    rules: rules({ lineupSize: 4, rarityCaps: { legendary: 1, epic: 0, common: 4 } }),
    leagueTeamId: 'team-1',
    pullIds: ['l1', 'e1', 'l2', 'l3'],
    copies,
  });
  t.same(check.invalid, [
    { path: '/pullIds/1', message: 'over the cap of 0 epic copies' },
    { path: '/pullIds/2', message: 'over the cap of 1 legendary copies' },
    { path: '/pullIds/3', message: 'over the cap of 1 legendary copies' },
  ]);
  const refusedFirst = checkLineup({
    rules: rules({ lineupSize: 2, rarityCaps: { legendary: 1 } }),
    leagueTeamId: 'team-1',
    pullIds: ['foreign', 'mine'],
    copies: [copy('foreign', 'legendary', 'team-9'), copy('mine', 'legendary')],
  });
  t.same(
    refusedFirst.invalid,
    [{ path: '/pullIds/0', message: "its team's collectibles are not eligible" }],
    'an ineligible copy does not use up the cap',
  );
});

t.test('checkLineup: an empty lineup is only too short', async (t) => {
  t.same(checkLineup({ rules: rules({ lineupSize: 1 }), leagueTeamId: 'team-1', pullIds: [], copies: [] }), {
    notOwned: [],
    invalid: [{ path: '/pullIds', message: 'must hold exactly 1 copies (0 given)' }],
  });
});

// --- Points ---------------------------------------------------------------------------------

t.test('lineupScore: exact hundredths, multiplied per rarity, best single copy', async (t) => {
  const multipliers = multipliersInHundredths(rules({ multipliers: { rare: 1.15, legendary: 0.01, epic: 2 } }));
  const scores = new Map([
    ['c1', 10],
    ['c2', 7],
    ['c3', -4],
    ['c4', 33],
  ]);
  const epic = { collectibleId: 'c3', rarity: 'epic' as const };
  const unscored = { collectibleId: 'unscored', rarity: 'epic' as const };
  const lineup = [
    { collectibleId: 'c1', rarity: 'common' as const },
    { collectibleId: 'c2', rarity: 'rare' as const },
    epic,
    { collectibleId: 'c4', rarity: 'legendary' as const },
    unscored,
  ];
  // 10×100 + 7×115 − 4×200 + 33×1 + 0 = 1000 + 805 − 800 + 33
  t.same(lineupScore(lineup, scores, multipliers), { score: 1038, best: 1000 });
  t.same(lineupScore([], scores, multipliers), { score: 0, best: 0 }, 'an empty lineup');
  t.same(
    lineupScore([epic, epic], scores, multipliers),
    { score: -1600, best: -800 },
    'negative scores: best is the highest, still negative',
  );
  t.same(lineupScore([unscored], scores, multipliers), { score: 0, best: 0 }, 'no score posted counts 0');
  const max = lineupScore(
    Array.from({ length: 11 }, () => ({ collectibleId: 'top', rarity: 'common' as const })),
    new Map([['top', 100_000]]),
    { common: 10_000, uncommon: 100, rare: 100, epic: 100, legendary: 100 },
  );
  t.equal(max.score, 11 * 100_000 * 10_000, 'the largest lineup stays an exact integer');
  t.ok(Number.isSafeInteger(max.score));
});

t.test('formatPoints and parsePoints: two decimals, both ways', async (t) => {
  const cases: [number, string][] = [
    [0, '0.00'],
    [-0, '0.00'],
    [5, '0.05'],
    [-5, '-0.05'],
    [-150, '-1.50'],
    [123405, '1234.05'],
    [100, '1.00'],
    [-1_100_000_000, '-11000000.00'],
  ];
  for (const [hundredths, text] of cases) {
    t.equal(formatPoints(hundredths), text);
    t.equal(parsePoints(text), hundredths === 0 ? 0 : hundredths);
  }
  t.ok(Object.is(parsePoints('-0.00'), 0), 'no negative zero');
  t.throws(() => formatPoints(1.5), RangeError);
  t.throws(() => formatPoints(Number.NaN), RangeError);
  for (const bad of ['1.5', '1', '+1.00', '1.005', ' 1.00', '-.50', '']) t.throws(() => parsePoints(bad), RangeError);
});

t.test('pointsToApi and pointsFromApi round-trip every hundredth, negative and .05 included', async (t) => {
  for (const hundredths of [0, 5, -5, 105, -150, 115, 3333, -99_995, 123405, 1_100_000_000, -1_100_000_000]) {
    t.equal(pointsFromApi(pointsToApi(hundredths)), hundredths);
  }
  for (let hundredths = -20_000; hundredths <= 20_000; hundredths++) {
    if (pointsFromApi(pointsToApi(hundredths)) !== hundredths) t.fail(`${hundredths} did not round-trip`);
  }
  t.ok(Object.is(pointsFromApi(-0.001), 0), 'no negative zero');
});

// --- Standings ------------------------------------------------------------------------------

const at = (minute: number) => new Date(Date.UTC(2026, 10, 26, 12, minute));
const entry = (userId: string, score: number, best = 0, minute = 0): StandingEntry => ({
  userId,
  score,
  best,
  submittedAt: at(minute),
});

/** A deterministic shuffle (seeded LCG), so a failure can be replayed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  let state = seed;
  for (let i = copy.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

const table = [
  entry('ann', 900),
  entry('bob', 500, 300, 5),
  entry('cat', 500, 300, 1),
  entry('dan', 500, 400, 9),
  entry('eve', 200),
  entry('fay', 200, 0, 0),
  entry('gus', -50, -50),
];

t.test('rankStandings: competition ranks on score, ties ordered by best, submission, userId', async (t) => {
  const standings = rankStandings(table);
  t.same(
    standings.map((s) => [s.position, s.rank, s.userId]),
    [
      [1, 1, 'ann'],
      [2, 2, 'dan'],
      [3, 2, 'cat'],
      [4, 2, 'bob'],
      [5, 5, 'eve'],
      [6, 5, 'fay'],
      [7, 7, 'gus'],
    ],
    'three fans on one score share rank 2, the next is 5; dan has the best copy, cat submitted first; eve and fay tie on everything but userId',
  );
  t.equal(standings[0]?.submittedAt, table[0]?.submittedAt, 'the entry is kept');
  t.same(rankStandings([]), []);
  t.same(
    rankStandings([entry('zed', 0), entry('amy', 0)]).map((s) => [s.userId, s.rank]),
    [
      ['amy', 1],
      ['zed', 1],
    ],
  );
  t.same(
    rankStandings([entry('B', 1), entry('a', 1)]).map((s) => s.userId),
    ['B', 'a'],
    'code-unit order, not locale order',
  );
});

t.test('rankStandings: the input order never matters', async (t) => {
  const expected = rankStandings(table);
  for (let seed = 1; seed <= 50; seed++) t.same(rankStandings(shuffled(table, seed)), expected, `seed ${seed}`);
  t.same(rankStandings([...table].reverse()), expected);
});

// --- Canonical lines and hash ---------------------------------------------------------------

t.test('canonicalStandingLine: the documented JSON array', async (t) => {
  t.equal(
    canonicalStandingLine({
      position: 1,
      rank: 1,
      userId: 'fan-1',
      score: 1230,
      best: 405,
      submittedAt: new Date('2026-11-26T12:00:00Z'),
    }),
    '[1,1,"fan-1","12.30","4.05","2026-11-26T12:00:00.000Z"]',
  );
  t.equal(
    canonicalStandingLine({ position: 2, rank: 2, userId: 'a"b', score: -5, best: -150, submittedAt: at(1) }),
    '[2,2,"a\\"b","-0.05","-1.50","2026-11-26T12:01:00.000Z"]',
    'JSON escaping',
  );
});

t.test('standingsHash: SHA-256 of the lines in position order, no trailing newline', async (t) => {
  t.equal(
    standingsHash([]),
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    'the hash of the empty string',
  );
  const standings = rankStandings(table);
  const lines = standings.map(canonicalStandingLine);
  const expected = createHash('sha256').update(lines.join('\n')).digest('hex');
  t.equal(standingsHash(standings), expected);
  t.equal(standingsHash(shuffled(standings, 7)), expected, 'taken in position order');
  t.not(
    standingsHash(standings),
    createHash('sha256')
      .update(`${lines.join('\n')}\n`)
      .digest('hex'),
    'a trailing newline changes it',
  );
  const changed = standings.map((s) => (s.userId === 'gus' ? { ...s, score: s.score + 1 } : s));
  t.not(standingsHash(changed), expected, 'one hundredth changes it');
});

t.test('the API form of a row gives the same line and hash', async (t) => {
  const standings = rankStandings([
    entry('neg', -5, -5, 3),
    entry('five', 5, 5, 2),
    entry('big', 123405, 100005, 1),
    entry('half', -150, 115, 4),
    entry('zero', 0, 0, 0),
  ]);
  const apiRows = standings.map((s) => ({
    position: s.position,
    rank: s.rank,
    userId: s.userId,
    score: pointsToApi(s.score),
    best: pointsToApi(s.best),
    // Served as JSON: a number and an ISO string.
    submittedAt: s.submittedAt.toISOString(),
  }));
  const served = JSON.parse(JSON.stringify(apiRows)) as typeof apiRows;
  t.same(
    served.map((row) => row.score),
    [1234.05, 0.05, 0, -0.05, -1.5],
  );
  t.same(served.map(standingLineFromApi), standings.map(canonicalStandingLine));
  const recomputed = createHash('sha256').update(served.map(standingLineFromApi).join('\n')).digest('hex');
  t.equal(recomputed, standingsHash(standings));
});

// --- Prizes ---------------------------------------------------------------------------------

const band = (fromRank: number, toRank: number, rewardId = `reward-${fromRank}-${toRank}`): PrizeBand => ({
  fromRank,
  toRank,
  rewardId,
});

t.test('validatePrizes: ordered, in range, not overlapping, at most 20', async (t) => {
  t.same(validatePrizes([]), []);
  t.same(validatePrizes([band(4, 10), band(1, 1), band(2, 3), band(11, 100_000)]), [], 'any order, adjacent bands');
  t.same(validatePrizes([band(3, 2)]), [{ path: '/prizes/0/toRank', message: 'must be at least fromRank' }]);
  t.same(validatePrizes([band(1, 100_001), band(0, 1)], '/body/prizes'), [
    { path: '/body/prizes/0/toRank', message: 'must be a whole number from 1 to 100000' },
    { path: '/body/prizes/1/fromRank', message: 'must be a whole number from 1 to 100000' },
  ]);
  t.same(validatePrizes([band(1, 5), band(6, 8), band(5, 6), band(8, 8)]), [
    { path: '/prizes/2', message: 'overlaps band 0 (ranks 1 to 5)' },
    { path: '/prizes/3', message: 'overlaps band 1 (ranks 6 to 8)' },
  ]);
  t.same(validatePrizes([band(1, 3), band(1, 3)]), [{ path: '/prizes/1', message: 'overlaps band 0 (ranks 1 to 3)' }]);
  const many = Array.from({ length: 21 }, (_, i) => band(i + 1, i + 1));
  t.same(validatePrizes(many), [{ path: '/prizes', message: 'must have at most 20 bands' }]);
  t.same(validatePrizes(many.slice(0, 20)), []);
});

t.test('prizeBandFor and bandSize', async (t) => {
  const bands = [band(1, 1), band(2, 3), band(10, 20)];
  t.equal(prizeBandFor(1, bands), bands[0]);
  t.equal(prizeBandFor(3, bands), bands[1]);
  t.equal(prizeBandFor(10, bands), bands[2]);
  t.equal(prizeBandFor(20, bands), bands[2]);
  t.equal(prizeBandFor(4, bands), undefined);
  t.equal(prizeBandFor(21, bands), undefined);
  t.equal(prizeBandFor(1, []), undefined);
  t.equal(bandSize(band(1, 1)), 1);
  t.equal(bandSize(band(2, 3)), 2);
  t.equal(bandSize(band(10, 20)), 11);
});

t.test('winners: every fan tied on a rank inside a band wins it', async (t) => {
  const standings = rankStandings([
    entry('a', 1000),
    entry('b', 800, 0, 1),
    entry('c', 800, 0, 2),
    entry('d', 800, 0, 3),
    entry('e', 700),
    entry('f', 100),
  ]);
  t.same(
    standings.map((s) => s.rank),
    [1, 2, 2, 2, 5, 6],
  );
  const top = band(1, 3, 'gold');
  const fifth = band(5, 5, 'silver');
  const result = winners(standings, [top, fifth]);
  t.same(
    result.map((w) => [w.userId, w.rank, w.band.rewardId]),
    [
      ['a', 1, 'gold'],
      ['b', 2, 'gold'],
      ['c', 2, 'gold'],
      ['d', 2, 'gold'],
      ['e', 5, 'silver'],
    ],
    'a band 1-3 with ranks 1, 2, 2, 2 pays four fans; rank 6 wins nothing',
  );
  t.same(
    winners(rankStandings([entry('x', 5), entry('y', 5), entry('z', 1)]), [band(2, 2, 'second')]),
    [],
    'a tie on rank 1 leaves rank 2 empty: nobody wins its band',
  );
  t.same(winners([], [top]), []);
  t.same(winners(standings, []), []);
  t.same(
    winners(shuffled(standings, 3), [top]).map((w) => w.userId),
    ['a', 'b', 'c', 'd'],
    'in position order',
  );
});

// --- Rounds ---------------------------------------------------------------------------------

const hour = (h: number) => new Date(Date.UTC(2026, 10, 28, h));

t.test('validateRoundTimes: opensAt < locksAt < endsAt <= finalizesAt', async (t) => {
  t.same(validateRoundTimes({ opensAt: hour(1), locksAt: hour(2), endsAt: hour(3) }), []);
  t.same(validateRoundTimes({ opensAt: hour(1), locksAt: hour(2), endsAt: hour(3), finalizesAt: hour(3) }), []);
  t.same(validateRoundTimes({ opensAt: hour(1), locksAt: hour(2), endsAt: hour(3), finalizesAt: null }), []);
  t.same(validateRoundTimes({ opensAt: hour(2), locksAt: hour(2), endsAt: hour(2), finalizesAt: hour(1) }), [
    { path: '/locksAt', message: 'must be after opensAt' },
    { path: '/endsAt', message: 'must be after locksAt' },
    { path: '/finalizesAt', message: 'must be at or after endsAt' },
  ]);
  t.same(validateRoundTimes({ opensAt: hour(3), locksAt: hour(2), endsAt: hour(4) }, '/rounds/1'), [
    { path: '/rounds/1/locksAt', message: 'must be after opensAt' },
  ]);
  t.same(validateRoundTimes({ opensAt: hour(1), locksAt: new Date('nope'), endsAt: hour(3) }), [
    { path: '/locksAt', message: 'is not a date' },
  ]);
});

t.test('roundStatusAt: upcoming, open, locked by time; final once finalized', async (t) => {
  const round = { opensAt: hour(1), locksAt: hour(2), finalizedAt: null };
  t.equal(roundStatusAt(round, hour(0)), 'upcoming');
  t.equal(roundStatusAt(round, new Date(hour(1).getTime() - 1)), 'upcoming');
  t.equal(roundStatusAt(round, hour(1)), 'open', 'open from opensAt');
  t.equal(roundStatusAt(round, new Date(hour(2).getTime() - 1)), 'open');
  t.equal(roundStatusAt(round, hour(2)), 'locked', 'locked from locksAt');
  t.equal(roundStatusAt(round, hour(100)), 'locked', 'stays locked until finalized');
  t.equal(roundStatusAt({ ...round, finalizedAt: hour(5) }, hour(6)), 'final');
  t.equal(roundStatusAt({ ...round, finalizedAt: hour(5) }, hour(0)), 'final', 'finalized wins over the clock');
});

t.test('playOverlaps: half-open [locksAt, endsAt)', async (t) => {
  const round = (locks: number, ends: number) => ({ locksAt: hour(locks), endsAt: hour(ends) });
  t.equal(playOverlaps(round(2, 4), round(3, 5)), true);
  t.equal(playOverlaps(round(3, 5), round(2, 4)), true, 'symmetric');
  t.equal(playOverlaps(round(2, 10), round(4, 5)), true, 'one inside the other');
  t.equal(playOverlaps(round(2, 4), round(2, 4)), true, 'the same window');
  t.equal(playOverlaps(round(2, 4), round(4, 6)), false, 'ending as the other locks');
  t.equal(playOverlaps(round(4, 6), round(2, 4)), false);
  t.equal(playOverlaps(round(2, 4), round(5, 6)), false);
});
