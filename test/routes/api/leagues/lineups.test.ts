import { sql } from 'drizzle-orm';
import t from 'tap';
import { buildTestApp, tokenFor } from '../../../support/app.js';
import { expectStatus } from '../../../support/catalog.js';
import { assertNoViolations, sqlRows } from '../../../support/economy.js';
import {
  adminRoundUrl,
  copiesOf,
  giveCards,
  inSeconds,
  leagueWorld,
  openRound,
  putLineup,
  roundUrl,
  sleep,
} from '../../../support/leagues.js';
import { call, codeOf, detailPaths } from '../../../support/teams.js';

/**
 * Lineups: only copies the fan owns, by the league's rules, one round at a time for a copy whose
 * play windows overlap, editable until locksAt by the database's clock, one consistent lineup
 * whatever edits race.
 */

const storedLineup = (app: Parameters<typeof sqlRows>[0], roundId: string, userId: string) =>
  sqlRows<{ position: number; pull_id: string }>(
    app,
    sql`select position, pull_id from lineup_entries where round_id = ${roundId} and user_id = ${userId} order by position`,
  );

t.test('copies not owned are 404 per position, rule failures 400, a re-save keeps submittedAt', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'lu', {
    lineupSize: 2,
    eligible: { minRarity: 'uncommon' },
    rarityCaps: { legendary: 1 },
  });
  await giveCards(app, world, ['lu-fan', 'lu-other'], 2);
  const round = await openRound(app, world.leagueId, 60);
  const mine = await copiesOf(app, 'lu-fan');
  const theirs = await copiesOf(app, 'lu-other');
  const fan = tokenFor('lu-fan');
  const rare = mine.filter((c) => c.rarity === 'rare');
  const legendary = mine.filter((c) => c.rarity === 'legendary');
  const common = mine.find((c) => c.rarity === 'common');

  const none = await call(app, 'GET', `${roundUrl(world.leagueId, round.id)}/lineup`, fan);
  t.equal(codeOf(none), 'lineup_not_found');

  const notMine = await putLineup(app, fan, world.leagueId, round.id, [
    rare[0]?.pullId as string,
    theirs[0]?.pullId as string,
  ]);
  t.equal(notMine.statusCode, 404);
  t.equal(codeOf(notMine), 'pull_not_found');
  t.same(detailPaths(notMine), ['/pullIds/1'], 'the position of the copy not owned');
  const unknown = await putLineup(app, fan, world.leagueId, round.id, ['no-such-pull', 'nor-this']);
  t.same(detailPaths(unknown), ['/pullIds/0', '/pullIds/1']);

  const cases: [string, string[], string[]][] = [
    ['too few', [rare[0]?.pullId as string], ['/pullIds']],
    ['a repeat', [rare[0]?.pullId as string, rare[0]?.pullId as string], ['/pullIds/1']],
    ['below minRarity', [rare[0]?.pullId as string, common?.pullId as string], ['/pullIds/1']],
    ['over the legendary cap', [legendary[0]?.pullId as string, legendary[1]?.pullId as string], ['/pullIds/1']],
  ];
  for (const [label, pullIds, paths] of cases) {
    const res = await putLineup(app, fan, world.leagueId, round.id, pullIds);
    t.equal(res.statusCode, 400, label);
    t.equal(codeOf(res), 'lineup_invalid', label);
    t.same(detailPaths(res), paths, label);
  }
  t.same(await storedLineup(app, round.id, 'lu-fan'), [], 'nothing refused was stored');

  const first = await putLineup(app, fan, world.leagueId, round.id, [
    rare[0]?.pullId as string,
    rare[1]?.pullId as string,
  ]);
  expectStatus(first, 200, 'save');
  const saved = first.json().data;
  t.same(saved.pullIds, [rare[0]?.pullId, rare[1]?.pullId]);
  t.same(
    saved.entries.map((e: { rarity: string }) => e.rarity),
    ['rare', 'rare'],
  );
  await sleep(20);
  const reordered = await putLineup(app, fan, world.leagueId, round.id, [
    rare[1]?.pullId as string,
    rare[0]?.pullId as string,
  ]);
  expectStatus(reordered, 200, 'reorder');
  t.equal(reordered.json().data.submittedAt, saved.submittedAt, 'the same copies in another order keep submittedAt');
  t.not(reordered.json().data.updatedAt, saved.updatedAt);
  await sleep(20);
  const changed = await putLineup(app, fan, world.leagueId, round.id, [
    rare[1]?.pullId as string,
    legendary[0]?.pullId as string,
  ]);
  expectStatus(changed, 200, 'change');
  t.ok(changed.json().data.submittedAt > saved.submittedAt, 'another copy moves submittedAt');
  const read = await call(app, 'GET', `${roundUrl(world.leagueId, round.id)}/lineup`, fan);
  t.same(read.json().data, changed.json().data, 'GET answers what PUT stored');

  const anonymous = await app.inject({
    method: 'PUT',
    url: `${roundUrl(world.leagueId, round.id)}/lineup`,
    payload: { pullIds: [] },
  });
  t.equal(anonymous.statusCode, 401);
  const otherLeague = await putLineup(app, fan, 'no-such-league', round.id, [rare[0]?.pullId as string]);
  t.equal(codeOf(otherLeague), 'league_not_found');
  await assertNoViolations(t, app);
});

t.test('a copy cannot play in two rounds whose play windows overlap; it can in rounds that do not', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'ov', { lineupSize: 1, eligible: {} });
  await giveCards(app, world, ['ov-fan']);
  const [copy] = await copiesOf(app, 'ov-fan');
  const fan = tokenFor('ov-fan');
  // Play windows: A [+60 s, +1 h), B [+30 min, +2 h) overlaps A, C [+1 h, +3 h) starts as A ends.
  const a = await openRound(app, world.leagueId, 60, { endsAt: inSeconds(3600) });
  const b = await openRound(app, world.leagueId, 1800, { endsAt: inSeconds(7200) });
  const c = await openRound(app, world.leagueId, 3600, { locksAt: a.endsAt, endsAt: inSeconds(10800) });
  expectStatus(await putLineup(app, fan, world.leagueId, a.id, [copy?.pullId as string]), 200, 'round A');
  const clash = await putLineup(app, fan, world.leagueId, b.id, [copy?.pullId as string]);
  t.equal(clash.statusCode, 409);
  t.equal(codeOf(clash), 'copy_in_overlapping_round');
  t.same(detailPaths(clash), ['/pullIds/0']);
  expectStatus(
    await putLineup(app, fan, world.leagueId, c.id, [copy?.pullId as string]),
    200,
    'round C: half-open windows do not overlap',
  );
  // Stretching C back over A would put the copy in two overlapping rounds: refused.
  const stretch = await call(app, 'PATCH', adminRoundUrl(world.leagueId, c.id), tokenFor('root', { role: 'admin' }), {
    payload: { locksAt: inSeconds(1800) },
  });
  t.equal(stretch.statusCode, 409);
  t.equal(codeOf(stretch), 'round_window_conflict');
  await assertNoViolations(t, app);
});

t.test(
  'edits racing locksAt: every accepted edit is stored before locksAt, the first refusal is round_locked',
  async (t) => {
    const app = await buildTestApp(t);
    const world = await leagueWorld(app, 'race', { lineupSize: 1, eligible: {} });
    await giveCards(app, world, ['race-fan']);
    const copies = await copiesOf(app, 'race-fan');
    const fan = tokenFor('race-fan');
    const round = await openRound(app, world.leagueId, 1.5);
    const locksAt = new Date(round.locksAt).getTime();
    let accepted = 0;
    let refusal: ReturnType<typeof codeOf> | 'none' = 'none';
    for (let attempt = 0; attempt < 400; attempt++) {
      const copy = copies[attempt % copies.length] as { pullId: string };
      const res = await putLineup(app, fan, world.leagueId, round.id, [copy.pullId]);
      if (res.statusCode !== 200) {
        t.equal(res.statusCode, 409);
        refusal = codeOf(res);
        break;
      }
      accepted++;
      t.ok(new Date(res.json().data.submittedAt).getTime() < locksAt, 'stored before locksAt');
      await sleep(5);
    }
    t.ok(accepted > 0, `${accepted} edits accepted`);
    t.equal(refusal, 'round_locked', 'the first refusal');
    const [stored] = await sqlRows<{ submitted_at: string | Date }>(
      app,
      sql`select submitted_at from lineups where round_id = ${round.id} and user_id = 'race-fan'`,
    );
    t.ok(
      new Date(stored?.submitted_at as string).getTime() < locksAt,
      'the stored lineup was submitted before locksAt',
    );
    const before = await storedLineup(app, round.id, 'race-fan');
    for (const copy of copies) {
      const late = await putLineup(app, fan, world.leagueId, round.id, [copy.pullId]);
      t.equal(codeOf(late), 'round_locked');
    }
    t.same(await storedLineup(app, round.id, 'race-fan'), before, 'nothing changes after locksAt');
  },
);

t.test('concurrent saves of one lineup store exactly one of them, entries consistent', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'cc', { lineupSize: 2, eligible: {} });
  await giveCards(app, world, ['cc-fan'], 2);
  const copies = (await copiesOf(app, 'cc-fan')).map((c) => c.pullId);
  const fan = tokenFor('cc-fan');
  const round = await openRound(app, world.leagueId, 60);
  const candidates = [0, 2, 4, 6, 8].map((i) => [copies[i], copies[i + 1]] as string[]);
  const answers = await Promise.all(
    candidates.map((pullIds) => putLineup(app, fan, world.leagueId, round.id, pullIds)),
  );
  t.same(
    answers.map((res) => res.statusCode),
    [200, 200, 200, 200, 200],
  );
  const stored = (await storedLineup(app, round.id, 'cc-fan')).map((row) => row.pull_id);
  t.ok(
    candidates.some((pullIds) => JSON.stringify(pullIds) === JSON.stringify(stored)),
    `the stored lineup is one of those saved: ${JSON.stringify(stored)}`,
  );
  const read = await call(app, 'GET', `${roundUrl(world.leagueId, round.id)}/lineup`, fan);
  t.same(read.json().data.pullIds, stored);
});

t.test('two overlapping rounds racing for one copy: exactly one lineup gets it', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'duel', { lineupSize: 1, eligible: {} });
  await giveCards(app, world, ['duel-fan']);
  const copies = await copiesOf(app, 'duel-fan');
  const fan = tokenFor('duel-fan');
  for (const [index, copy] of copies.slice(0, 3).entries()) {
    const a = await openRound(app, world.leagueId, 60 + index * 10_000);
    const b = await openRound(app, world.leagueId, 90 + index * 10_000);
    const answers = await Promise.all([
      putLineup(app, fan, world.leagueId, a.id, [copy.pullId]),
      putLineup(app, fan, world.leagueId, b.id, [copy.pullId]),
    ]);
    t.same(answers.map((res) => res.statusCode).sort(), [200, 409], `race ${index}: one round took the copy`);
    t.same(answers.map(codeOf).filter(Boolean), ['copy_in_overlapping_round']);
  }
  await assertNoViolations(t, app);
});
