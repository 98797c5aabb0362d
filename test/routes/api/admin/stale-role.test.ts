import { eq, sql } from 'drizzle-orm';
import t from 'tap';
import { packs } from '../../../../db/schema.js';
import { buildTestApp } from '../../../support/app.js';
import { packAction, packInStatus } from '../../../support/catalog.js';
import { holdLock, someoneWaitsForALock } from '../../../support/locks.js';
import { call, membersUrl, staffedTeam } from '../../../support/teams.js';

/**
 * A catalog write decides with the caller's role as it is when the write holds its locks, not as
 * it was when the request arrived: an editor demoted while its publish waited must not publish.
 */

t.test('an editor demoted to viewer while its publish waits for the pack lock does not publish', async (t) => {
  const app = await buildTestApp(t);
  const staff = await staffedTeam(app, 'stale');
  const { pack } = await packInStatus(app, 'draft', {
    pack: { teamId: staff.team.id, cardsPerPack: 1 },
    pool: [{ quantity: 5 }],
  });

  const lock = await holdLock(app, sql`select id from packs where id = ${pack.id} for update`);
  const publish = packAction(app, pack.id, { action: 'publish' }, staff.editor);
  await someoneWaitsForALock(app);
  const demoted = await call(app, 'PATCH', membersUrl(staff.team.id, 'stale-editor'), staff.owner, {
    payload: { role: 'viewer' },
  });
  t.equal(demoted.statusCode, 200, 'the owner demotes the editor meanwhile');
  await lock.release();

  const res = await publish;
  t.equal(res.statusCode, 403, `the publish is refused (${res.statusCode})`);
  t.equal(res.json().error.code, 'forbidden');
  const [row] = await app.db.orm.select().from(packs).where(eq(packs.id, pack.id));
  t.equal(row?.status, 'draft', 'the pack is still a draft');
});

t.test('an editor removed while its collectible edit waits does not edit', async (t) => {
  const app = await buildTestApp(t);
  const staff = await staffedTeam(app, 'gone');
  const created = await call(app, 'POST', '/api/admin/collectibles', staff.editor, {
    payload: { name: 'Card', teamId: staff.team.id },
  });
  const collectibleId = created.json().data.id as string;

  const lock = await holdLock(app, sql`select id from collectibles where id = ${collectibleId} for update`);
  const edit = call(app, 'PATCH', `/api/admin/collectibles/${collectibleId}`, staff.editor, {
    payload: { name: 'Renamed by a former editor' },
  });
  await someoneWaitsForALock(app);
  t.equal(
    (await call(app, 'DELETE', membersUrl(staff.team.id, 'gone-editor'), staff.owner)).statusCode,
    200,
    'removed meanwhile',
  );
  await lock.release();

  const res = await edit;
  t.equal(res.statusCode, 404, 'a former member cannot even see the collectible');
  const read = await call(app, 'GET', `/api/admin/collectibles/${collectibleId}`, staff.owner);
  t.equal(read.json().data.name, 'Card', 'unchanged');
});

t.test('a catalog write holding its member row and a membership change of the same team do not deadlock', async (t) => {
  const app = await buildTestApp(t);
  const staff = await staffedTeam(app, 'order');
  const teamId = staff.team.id;
  // What createPack and createCollectible do, step by step: the caller's member row FOR SHARE
  // (withCurrentRole), then the insert, whose foreign-key check locks the team row FOR KEY SHARE.
  let memberLocked: () => void = () => {};
  const isLocked = new Promise<void>((resolve) => (memberLocked = resolve));
  let insert: () => void = () => {};
  const insertNow = new Promise<void>((resolve) => (insert = resolve));
  const writer = app.db.transaction(async (tx) => {
    await tx.execute(
      sql`select role from team_admins where team_id = ${teamId} and user_id = 'order-editor' for share`,
    );
    memberLocked();
    await insertNow;
    await tx.execute(sql`select id from teams where id = ${teamId} for key share nowait`);
  });
  await isLocked;
  // The owner demotes that editor: the team row locked, then the member row, which waits.
  const change = call(app, 'PATCH', membersUrl(teamId, 'order-editor'), staff.owner, { payload: { role: 'viewer' } });
  await someoneWaitsForALock(app);
  insert();
  await t.resolves(
    writer,
    "the foreign-key check's lock on the team row is granted at once, so neither waits for the other",
  );
  const res = await change;
  t.equal(res.statusCode, 200, 'and the membership change completes once the write commits');
  t.equal(res.json().data.role, 'viewer');
});
