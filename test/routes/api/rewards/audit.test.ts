import t from 'tap';
import { buildTestApp } from '../../../support/app.js';
import { auditLog, expectStatus } from '../../../support/catalog.js';
import { signIn } from '../../../support/economy.js';
import { adminGrantRequest, createReward, revokeRequest } from '../../../support/rewards.js';

/** What admins do with rewards is in the audit log: a reward made, a batch granted, a grant revoked. */

t.test('creating, granting and revoking leave their audit rows', async (t) => {
  const app = await buildTestApp(t);
  const fans = await Promise.all(['a', 'b'].map((name) => signIn(app, `audited-${name}`)));
  const reward = await createReward(app, { name: 'Make-good', coins: 5 });
  const granted = await adminGrantRequest(app, reward.id, {
    userIds: fans.map((fan) => fan.id),
    key: 'outage-2026-11',
    reason: 'the outage',
  });
  expectStatus(granted, 200, 'grant');
  const repeat = await adminGrantRequest(app, reward.id, {
    userIds: fans.map((fan) => fan.id),
    key: 'outage-2026-11',
    reason: 'the outage',
  });
  t.ok(repeat.statusCode < 300, 'a repeat answers the grants made');
  const grantId = granted.json().data[0].grant.id as string;
  expectStatus(await revokeRequest(app, grantId), 200, 'revoke');

  const rows = await auditLog(app, { targetId: reward.id });
  t.same(
    rows.map((row) => row.action),
    ['reward.grant', 'reward.create'],
    'one row for the batch that gave something, none for the repeat that gave nothing',
  );
  t.match(rows[0]?.after, { key: 'outage-2026-11', granted: 2 });
  const revoked = await auditLog(app, { targetId: grantId });
  t.match(revoked, [
    { action: 'grant.revoke', targetType: 'grant', before: { status: 'granted' }, after: { status: 'revoked' } },
  ]);
});
