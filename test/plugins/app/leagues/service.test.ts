import { sql } from 'drizzle-orm';
import t from 'tap';
import { findEconomyViolations } from '../../../../plugins/app/invariants/checker.js';
import { buildTestApp, tokenFor } from '../../../support/app.js';
import { expectStatus } from '../../../support/catalog.js';
import {
  copiesOf,
  finalizeRequest,
  giveCards,
  leagueWorld,
  openRound,
  postScores,
  putLineup,
  waitUntil,
  wholeBoard,
} from '../../../support/leagues.js';

/**
 * What the leagues service offers the league boards (standingsPage, roundOf, leagueOf), points in
 * hundredths, and the invariants that catch standings changed after the fact.
 */

t.test('standingsPage pages a final round by position in hundredths; roundOf and leagueOf describe it', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'svc', { lineupSize: 1, eligible: {}, multipliers: { rare: 1.15 } });
  const fans = ['svc-a', 'svc-b', 'svc-c'];
  await giveCards(app, world, fans);
  const round = await openRound(app, world.leagueId, 1.2);
  const rarities: Record<string, string> = { 'svc-a': 'rare', 'svc-b': 'common', 'svc-c': 'epic' };
  for (const fan of fans) {
    const copy = (await copiesOf(app, fan)).find((c) => c.rarity === rarities[fan]);
    expectStatus(await putLineup(app, tokenFor(fan), world.leagueId, round.id, [copy?.pullId as string]), 200, fan);
  }
  t.equal((await app.leagues.roundOf(app.db.orm, round.id))?.finalizedAt, null, 'not final yet');
  await waitUntil(round.locksAt);
  // rare: 7 × 1.15 = 8.05; common: -2; epic: 8.
  const points: Record<string, number> = { rare: 7, common: -2, epic: 8, uncommon: 0, legendary: 0 };
  const scores = world.cards.map((card) => ({ collectibleId: card.id, score: points[card.rarity] as number }));
  expectStatus(await postScores(app, world.leagueId, round.id, scores), 200, 'scores');
  const final = await finalizeRequest(app, world.leagueId, round.id);
  expectStatus(final, 200, 'finalize');

  const first = await app.leagues.standingsPage(app.db.orm, round.id, 0, 2);
  t.same(
    first.map((line) => [line.position, line.rank, line.userId, line.score, line.best]),
    [
      [1, 1, 'svc-a', 805, 805],
      [2, 2, 'svc-c', 800, 800],
    ],
  );
  t.ok(first[0]?.submittedAt instanceof Date);
  const rest = await app.leagues.standingsPage(app.db.orm, round.id, 2, 2);
  t.same(
    rest.map((line) => [line.position, line.userId, line.score]),
    [[3, 'svc-b', -200]],
  );
  t.same(await app.leagues.standingsPage(app.db.orm, round.id, 3, 2), []);
  const { entries } = await wholeBoard(app, round.id);
  t.same(
    entries.map((e) => e.score),
    [8.05, 8, -2],
    'the board serves points',
  );

  const info = await app.leagues.roundOf(app.db.orm, round.id);
  t.same(
    { ...info, finalizedAt: info?.finalizedAt?.toISOString() },
    {
      roundId: round.id,
      leagueId: world.leagueId,
      teamId: world.staff.team.id,
      timeZone: 'UTC',
      leagueSeason: '2026-27',
      season: '2026-27',
      locksAt: new Date(round.locksAt),
      endsAt: new Date(round.endsAt),
      finalizedAt: final.json().data.finalizedAt,
      standingsHash: final.json().data.standingsHash,
      entrants: 3,
    },
  );
  t.same(await app.leagues.leagueOf(app.db.orm, world.leagueId), {
    leagueId: world.leagueId,
    teamId: world.staff.team.id,
    timeZone: 'UTC',
    season: '2026-27',
    status: 'active',
  });
  t.equal(await app.leagues.roundOf(app.db.orm, 'nope'), undefined);
  t.equal(await app.leagues.leagueOf(app.db.orm, 'nope'), undefined);

  t.same(await findEconomyViolations(app.db.orm), []);
  // A standings row changed after the freeze no longer matches the hash, nor its entrants a deleted one.
  await app.db.orm.execute(
    sql`update round_standings set score = score + 1 where round_id = ${round.id} and position = 3`,
  );
  const tampered = await findEconomyViolations(app.db.orm);
  t.ok(
    tampered.some((line) => line.includes('standingsHash')),
    'the hash invariant fails',
  );
  await app.db.orm.execute(sql`delete from round_standings where round_id = ${round.id} and position = 3`);
  t.ok(
    (await findEconomyViolations(app.db.orm)).some((line) => line.includes('entrants')),
    'the entrants invariant fails',
  );
});
