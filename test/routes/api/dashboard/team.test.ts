import { sql } from 'drizzle-orm';
import t from 'tap';
import { checkInvariants } from '../../../../plugins/app/invariants/checker.js';
import { buildTestApp, suiteServer } from '../../../support/app.js';
import { ADMIN, getAdminPack, packInStatus } from '../../../support/catalog.js';
import { buyPack, economyViolations, expectStatus, fund, openPack, signIn, sqlRows } from '../../../support/economy.js';
import { activeQuest, claim, drainQuests } from '../../../support/quests.js';
import { codeOf, staffedTeam } from '../../../support/teams.js';
import { drainDashboard, salesOfTeam, teamDashboard, totalPulls } from './helpers.js';

/** A team's dashboard on a mixed load: its totals are the sales tables', whatever the consumer replays. */

t.test(`the team dashboard (${suiteServer})`, async (t) => {
  const app = await buildTestApp(t);
  const staff = await staffedTeam(app, 'dash');
  const teamId = staff.team.id;
  const { pack, collectibles } = await packInStatus(app, 'active', {
    pack: { teamId, price: 10, cardsPerPack: 2 },
    pool: [
      { quantity: 30, collectible: { rarity: 'common' } },
      { quantity: 10, collectible: { rarity: 'rare' } },
    ],
  });
  const quest = await activeQuest(
    app,
    { teamId, criteria: { kind: 'count', event: 'purchase.completed', count: 1 } },
    { coins: 5 },
  );
  const fans = await Promise.all(['dash-fan-1', 'dash-fan-2', 'dash-fan-3'].map((id) => signIn(app, id)));
  for (const fan of fans) await fund(app, fan, 100);
  const [one, two, three] = fans as [(typeof fans)[0], (typeof fans)[0], (typeof fans)[0]];
  await buyPack(app, one, pack.id);
  await buyPack(app, one, pack.id);
  await buyPack(app, two, pack.id);
  await buyPack(app, three, pack.id);
  for (const fan of [one, one, two]) expectStatus(await openPack(app, fan, pack.id), 200, 'open');
  await drainQuests(app);
  expectStatus(await claim(app, one.token, quest.id), 201, 'claim');
  await drainDashboard(app);

  const read = async (token = staff.viewer) => {
    const res = await teamDashboard(app, token, teamId);
    expectStatus(res, 200, 'dashboard');
    return res.json().data;
  };

  await t.test('its totals are the purchases, the ledger, the opens and the pulls', async (t) => {
    const data = await read();
    const sales = await salesOfTeam(app, teamId);
    t.match(sales, { sold: 4, coins: 40, buyers: 3, opened: 3, pulls: 6 }, 'the load as made');
    t.match(data.totals, {
      packsSold: sales.sold,
      coinsTaken: sales.coins,
      uniqueBuyers: sales.buyers,
      packsOpened: sales.opened,
      questCompletions: 3,
      grants: 1,
      leagueEntries: 0,
    });
    t.equal(totalPulls(data.totals.pulls), sales.pulls, 'pulls by rarity add up to the pulls');
    const [rare] = await sqlRows<{ n: number }>(
      app,
      sql`select count(*)::int as n from pulls l join collectibles c on c.id = l.collectible_id where l.pack_id = ${pack.id} and c.rarity = 'rare'`,
    );
    t.equal(data.totals.pulls.rare, rare?.n, 'rare pulls');
    t.match(data, { teamId, timeZone: 'UTC' });
    t.equal(data.series.length, 30, 'the default range: 30 days');
    t.equal(
      data.series.reduce((sum: number, day: { packsSold: number }) => sum + day.packsSold, 0),
      sales.sold,
      'the series adds up to the totals',
    );
    t.ok(Math.abs(Date.parse(data.asOf) - Date.now()) < 60_000, 'caught up: asOf is now');

    const shown = data.packs.find((item: { packId: string }) => item.packId === pack.id);
    const admin = await getAdminPack(app, pack.id);
    t.match(shown, { sold: 4, opened: 3, coinsTaken: 40, soldAllTime: 4, available: admin.available });
    t.equal(
      shown.draws.reduce((sum: number, row: { observed: number }) => sum + row.observed, 0),
      6,
      'every draw observed',
    );
    t.same(
      Object.fromEntries(
        shown.draws.map((row: { collectibleId: string; expectedShare: number }) => [
          row.collectibleId,
          row.expectedShare,
        ]),
      ),
      Object.fromEntries(collectibles.map((c, i) => [c.id, i === 0 ? 0.75 : 0.25])),
      'expected shares: the pool as published (30 and 10 copies)',
    );
    t.match(shown.fairness.byCollectible, { draws: 6, categories: 2, degreesOfFreedom: 1 });
    t.ok(shown.fairness.byCollectible.pValue >= 0 && shown.fairness.byCollectible.pValue <= 1);
    t.ok(shown.fairness.byCollectible.minExpected < 5, 'six draws: too few for the approximation, and it says so');
    t.same(await economyViolations(app), [], 'every invariant holds, the dashboard rollups included');
  });

  await t.test('the consumer run twice, and a rebuild, add nothing twice', async (t) => {
    const before = await read();
    const strip = (data: { asOf?: string }) => ({ ...data, asOf: undefined });
    await app.db.orm.execute(sql`update event_cursors set txid = '0', event_id = 0 where consumer = 'dashboard'`);
    t.ok((await drainDashboard(app)) > 0, 'the whole log read again');
    t.same(strip(await read()), strip(before), 'the same dashboard');
    t.ok((await app.dashboard.rebuild()) > 0, 'rebuilt from the log');
    t.same(strip(await read()), strip(before), 'the same after a rebuild');
    await app.dashboard.rebuild();
    await drainDashboard(app);
    t.same(strip(await read()), strip(before), 'and after another rebuild and a drain');
  });

  await t.test('asOf stays at the first event not yet added', async (t) => {
    const fan = await signIn(app, 'dash-fan-late');
    await fund(app, fan, 10);
    await buyPack(app, fan, pack.id);
    const [event] = await sqlRows<{ at: Date }>(
      app,
      sql`select occurred_at as at from events where type = 'purchase.completed' and user_id = 'dash-fan-late'`,
    );
    const data = await read();
    t.ok(Date.parse(data.asOf) <= new Date(event?.at as Date).getTime(), 'asOf is not past the pending purchase');
    t.equal(data.totals.packsSold, 4, 'which is not counted yet');
    await drainDashboard(app);
    t.equal((await read()).totals.packsSold, 5, 'until the consumer adds it');
  });

  await t.test('the invariant reports rollups that disagree with the sales', async (t) => {
    class Rollback extends Error {}
    let failing: string[] = [];
    await app.db
      .transaction(async (tx) => {
        await tx.execute(sql`update dashboard_hours set packs_sold = packs_sold + 1 where pack_id = ${pack.id}`);
        await tx.execute(sql`update dashboard_pack_draws set draws = draws + 1`);
        failing = (await checkInvariants(tx)).filter((r) => r.violations.length > 0).map((r) => r.name);
        throw new Rollback();
      })
      .catch((error) => {
        if (!(error instanceof Rollback)) throw error;
      });
    t.ok(
      failing.some((name) => name.includes('packs sold and coins taken')),
      'packs sold',
      { failing },
    );
    t.ok(
      failing.some((name) => name.includes("each hour's total row")),
      'the total rows',
      { failing },
    );
    t.ok(
      failing.some((name) => name.includes('draws per pack')),
      'draws',
      { failing },
    );
  });

  await t.test('who may read it', async (t) => {
    for (const [who, token] of [
      ['viewer', staff.viewer],
      ['editor', staff.editor],
      ['owner', staff.owner],
      ['platform admin', ADMIN],
    ] as const)
      expectStatus(await teamDashboard(app, token, teamId), 200, who);
    const outsider = await signIn(app, 'dash-outsider');
    const outsiderRes = await teamDashboard(app, outsider.token, teamId);
    t.equal(outsiderRes.statusCode, 403, 'a fan with no admin role');
    const other = await staffedTeam(app, 'dash-other');
    const otherRes = await teamDashboard(app, other.viewer, teamId);
    t.equal(otherRes.statusCode, 404, "another team's viewer");
    t.equal(codeOf(otherRes), 'team_not_found', 'as if the team did not exist');
    t.equal((await teamDashboard(app, ADMIN, 'no-such-team')).statusCode, 404, 'an unknown team');
    t.equal((await teamDashboard(app, null, teamId)).statusCode, 401, 'no credentials');
    t.equal((await teamDashboard(app, staff.viewer, 'x'.repeat(129))).statusCode, 400, 'an id too long');
  });

  await t.test('bad ranges and zones are 400s', async (t) => {
    const cases: [Record<string, string>, string][] = [
      [{ timeZone: 'Mars/Olympus_Mons' }, 'invalid_time_zone'],
      [{ timeZone: '+01:00' }, 'invalid_time_zone'],
      [{ timeZone: "Europe/Paris'; drop table events; --" }, 'invalid_time_zone'],
      [{ from: '2026-03-10', to: '2026-03-10' }, 'invalid_range'],
      [{ from: '2026-03-11', to: '2026-03-10' }, 'invalid_range'],
      [{ from: '2024-01-01', to: '2025-01-03' }, 'invalid_range'],
      [{ from: '2026-02-30', to: '2026-03-10' }, 'invalid_range'],
      [{ from: 'yesterday' }, 'validation_failed'],
      [{ to: '2026-03-10T00:00:00Z' }, 'validation_failed'],
    ];
    for (const [query, code] of cases) {
      const res = await teamDashboard(app, staff.viewer, teamId, query);
      t.equal(res.statusCode, 400, JSON.stringify(query));
      t.equal(codeOf(res), code, `${JSON.stringify(query)}: ${code}`);
    }
    expectStatus(
      await teamDashboard(app, staff.viewer, teamId, { from: '2024-01-01', to: '2025-01-01' }),
      200,
      '366 days',
    );
  });
});

t.test(`days of a time zone, daylight-saving days included (${suiteServer})`, async (t) => {
  const app = await buildTestApp(t);
  const staff = await staffedTeam(app, 'dst');
  const { pack } = await packInStatus(app, 'active', {
    pack: { teamId: staff.team.id, price: 0, cardsPerPack: 1 },
    pool: [{ quantity: 10 }],
  });
  const fan = await signIn(app, 'dst-fan');
  for (let i = 0; i < 6; i++) await buyPack(app, fan, pack.id);
  // The sales happened around the two changes of 2026 in Paris (set on their events before the consumer reads them).
  const times = [
    '2026-03-28T23:30:00Z', // 00:30 CET on Sunday 29 March
    '2026-03-29T21:30:00Z', // 23:30 CEST on the 29th
    '2026-03-29T22:30:00Z', // 00:30 CEST on the 30th
    '2026-10-24T22:15:00Z', // 00:15 CEST on Sunday 25 October
    '2026-10-25T22:30:00Z', // 23:30 CET on the 25th
    '2026-10-25T23:10:00Z', // 00:10 CET on the 26th
  ];
  const ids = await sqlRows<{ id: number }>(
    app,
    sql`select id::int from events where type = 'purchase.completed' order by id`,
  );
  t.equal(ids.length, 6);
  for (const [index, row] of ids.entries())
    await app.db.orm.execute(sql`update events set occurred_at = ${times[index]}::timestamptz where id = ${row.id}`);
  await drainDashboard(app);

  const days = async (from: string, to: string, timeZone: string) => {
    const res = await teamDashboard(app, staff.viewer, staff.team.id, { from, to, timeZone });
    expectStatus(res, 200, `${from}..${to} ${timeZone}`);
    return res
      .json()
      .data.series.map((day: { date: string; hours: number; packsSold: number }) => [
        day.date,
        day.hours,
        day.packsSold,
      ]);
  };
  t.same(await days('2026-03-28', '2026-03-31', 'Europe/Paris'), [
    ['2026-03-28', 24, 0],
    ['2026-03-29', 23, 2],
    ['2026-03-30', 24, 1],
  ]);
  t.same(await days('2026-03-28', '2026-03-31', 'UTC'), [
    ['2026-03-28', 24, 1],
    ['2026-03-29', 24, 2],
    ['2026-03-30', 24, 0],
  ]);
  t.same(await days('2026-10-24', '2026-10-27', 'Europe/Paris'), [
    ['2026-10-24', 24, 0],
    ['2026-10-25', 25, 2],
    ['2026-10-26', 24, 1],
  ]);
  t.same(await days('2026-10-24', '2026-10-27', 'UTC'), [
    ['2026-10-24', 24, 1],
    ['2026-10-25', 24, 2],
    ['2026-10-26', 24, 0],
  ]);
  const res = await teamDashboard(app, staff.viewer, staff.team.id, {
    from: '2026-03-01',
    to: '2026-11-01',
    timeZone: 'Europe/Paris',
  });
  t.match(res.json().data.totals, { packsSold: 6, uniqueBuyers: 1 }, 'the whole range');
  const buyersIn = async (from: string, to: string) =>
    (await teamDashboard(app, staff.viewer, staff.team.id, { from, to, timeZone: 'Europe/Paris' })).json().data.totals
      .uniqueBuyers;
  t.equal(await buyersIn('2026-03-30', '2026-03-31'), 1, 'the buyer of the 30th (00:30 local)');
  t.equal(await buyersIn('2026-03-31', '2026-10-25'), 0, 'no purchase between the changes');
  t.equal(await buyersIn('2026-10-26', '2026-10-27'), 1, 'the buyer of the 26th (00:10 local)');
  t.same(await economyViolations(app), []);
});
