import t from 'tap';
import { buildTestApp, suiteServer } from '../../../support/app.js';
import { packInStatus } from '../../../support/catalog.js';
import { buyPack, expectStatus, fund, signIn } from '../../../support/economy.js';
import { codeOf, staffedTeam } from '../../../support/teams.js';
import { drainDashboard, platformDashboard, teamDashboard } from './helpers.js';
import { ADMIN } from '../../../support/catalog.js';

/** DASHBOARD_CACHE: an answer is reused for the same team, range and zone, after the caller's access is checked. */

t.test(`dashboard answers are reused for DASHBOARD_CACHE, per team, range and zone (${suiteServer})`, async (t) => {
  const app = await buildTestApp(t, { DASHBOARD_CACHE: '1 minute' });
  const staff = await staffedTeam(app, 'dcache');
  const other = await staffedTeam(app, 'dcache-other');
  const teamId = staff.team.id;
  const { pack } = await packInStatus(app, 'active', {
    pack: { teamId, price: 10, cardsPerPack: 1 },
    pool: [{ quantity: 20, collectible: { rarity: 'common' } }],
  });
  const fan = await signIn(app, 'dcache-fan');
  await fund(app, fan, 100);
  await buyPack(app, fan, pack.id);
  await drainDashboard(app);

  const read = async (token: string, query: Record<string, string> = {}) => {
    const res = await teamDashboard(app, token, teamId, query);
    expectStatus(res, 200, 'dashboard');
    return res.json().data;
  };
  const first = await read(staff.viewer);
  t.equal(first.totals.packsSold, 1);

  await buyPack(app, fan, pack.id);
  await drainDashboard(app);
  const again = await read(staff.owner);
  t.equal(again.totals.packsSold, 1, 'within the minute: the same answer, for every reader allowed');
  t.equal(again.asOf, first.asOf, 'and it says how far it reaches');

  const inParis = await read(staff.viewer, { timeZone: 'Europe/Paris' });
  t.equal(inParis.totals.packsSold, 2, 'another zone is another answer, computed now');

  const burst = await Promise.all(Array.from({ length: 5 }, () => read(staff.viewer, { timeZone: 'Asia/Tokyo' })));
  t.equal(new Set(burst.map((data) => JSON.stringify(data))).size, 1, 'concurrent identical reads get one answer');

  // Access is checked before the cache is asked: a member of another team, or a fan, gets nothing.
  const outsider = await teamDashboard(app, other.viewer, teamId);
  t.equal(outsider.statusCode, 404, 'another team: not found, as without the cache');
  t.equal(codeOf(await teamDashboard(app, fan.token, teamId)), 'forbidden');

  const platform = await platformDashboard(app, ADMIN);
  expectStatus(platform, 200, 'platform');
  t.equal(platform.json().data.totals.packsSold, 2);
  await buyPack(app, fan, pack.id);
  await drainDashboard(app);
  t.equal((await platformDashboard(app, ADMIN)).json().data.totals.packsSold, 2, 'the platform answer is reused too');
});
