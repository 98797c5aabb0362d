import t from 'tap';
import { buildTestApp } from '../../../support/app.js';
import { ADMIN, expectStatus, getAdminPack } from '../../../support/catalog.js';
import { assertNoViolations } from '../../../support/economy.js';
import {
  adminRoundUrl,
  createRoundRequest,
  inSeconds,
  leagueWorld,
  openRound,
  packBand,
} from '../../../support/leagues.js';
import { call, codeOf } from '../../../support/teams.js';

/** Prize bands hold their stock from the round's creation; an upcoming round's new bands re-promise it. */

t.test('an upcoming round’s prizes change with their stock; an open round’s do not', async (t) => {
  const app = await buildTestApp(t);
  const world = await leagueWorld(app, 'prz');
  const { packId, band } = await packBand(app, world, 5);
  const available = async () => (await getAdminPack(app, packId)).available;

  const created = await createRoundRequest(app, world.leagueId, {
    opensAt: inSeconds(60),
    locksAt: inSeconds(120),
    endsAt: inSeconds(180),
    prizes: [{ ...band, toRank: 3 }],
  });
  expectStatus(created, 201, 'create');
  const roundId = created.json().data.id as string;
  t.equal(created.json().data.status, 'upcoming');
  t.equal(await available(), 2, 'three packs held for ranks 1 to 3');
  const patch = (prizes: unknown[]) =>
    call(app, 'PATCH', adminRoundUrl(world.leagueId, roundId), ADMIN, { payload: { prizes } });

  const smaller = await patch([band]);
  expectStatus(smaller, 200, 'one band of one rank');
  t.same(smaller.json().data.prizes, [band]);
  t.equal(await available(), 4, 'two packs back on sale');
  const tooMany = await patch([{ ...band, toRank: 10 }]);
  t.equal(tooMany.statusCode, 409);
  t.equal(codeOf(tooMany), 'reward_stock_insufficient');
  t.equal(await available(), 4, 'a refused edit changes nothing');
  const bad = await patch([band, band]);
  t.equal(bad.statusCode, 400, 'overlapping bands');
  expectStatus(await patch([]), 200, 'no prizes');
  t.equal(await available(), 5, 'everything back');

  const open = await openRound(app, world.leagueId, 60);
  const late = await call(app, 'PATCH', adminRoundUrl(world.leagueId, open.id), ADMIN, { payload: { prizes: [] } });
  t.equal(late.statusCode, 409);
  t.equal(codeOf(late), 'round_immutable');
  await assertNoViolations(t, app);
});
