import { sql } from 'drizzle-orm';
import t from 'tap';
import type { App } from '../../../../app.js';
import type { Database } from '../../../../plugins/app/database/index.js';
import { checkInvariants, INVARIANTS } from '../../../../plugins/app/invariants/checker.js';
import { buildTestApp } from '../../../support/app.js';
import { createCollectible, packInStatus } from '../../../support/catalog.js';
import { assertNoViolations, openPack, signIn } from '../../../support/economy.js';
import { createReward, revokeRequest } from '../../../support/rewards.js';

/**
 * The invariants of the grant engine: green after grants, promises, an open and a revocation; and
 * each names the damage done to what it guards (in a transaction rolled back, triggers off).
 */

class Rollback extends Error {}

async function reportAfter(app: App, damage: (tx: Database) => Promise<unknown>): Promise<string[]> {
  let report: string[] = [];
  await app.db
    .transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      await damage(tx);
      report = (await checkInvariants(tx))
        .filter((result) => result.violations.length > 0)
        .map((result) => result.name);
      throw new Rollback();
    })
    .catch((error) => {
      if (!(error instanceof Rollback)) throw error;
    });
  return report;
}

const named = (words: string) => {
  const found = INVARIANTS.find((candidate) => candidate.name.includes(words));
  if (!found) throw new Error(`no invariant about "${words}"`);
  return found.name;
};

t.test('the invariants of rewards', async (t) => {
  const app = await buildTestApp(t);
  const { pack } = await packInStatus(app, 'active', {
    pack: { cardsPerPack: 2, supply: 20 },
    pool: [{ quantity: 40 }],
  });
  const card = await createCollectible(app, { name: 'Prize card' });
  const reward = await createReward(app, {
    coins: 40,
    packs: [{ packId: pack.id, count: 2 }],
    collectibles: [{ collectibleId: card.id, count: 1 }],
  });
  await app.db.transaction((tx) => app.rewards.promise(tx, { key: 'round:inv', rewardId: reward.id, count: 3 }));
  const fans = await Promise.all(['inv-1', 'inv-2'].map((id) => signIn(app, id)));
  const grants = [];
  for (const fan of fans) {
    grants.push(
      await app.db.transaction((tx) =>
        app.rewards.grant(tx, {
          sourceKey: `round:inv:${fan.id}`,
          userId: fan.id,
          rewardId: reward.id,
          reason: 'prize',
          promiseKey: 'round:inv',
        }),
      ),
    );
  }
  t.equal((await openPack(app, fans[0] as never, pack.id)).statusCode, 200);
  const revoked = await revokeRequest(app, (grants[0] as { grant: { id: string } }).grant.id);
  t.has(revoked.json().data, { packsTakenBack: 1, packsKept: 1, collectiblesKept: 1, coinsTakenBack: 40 });
  await assertNoViolations(t, app);

  const grantId = (grants[1] as { grant: { id: string } }).grant.id;
  const cases: [string, (tx: Database) => Promise<unknown>, string][] = [
    [
      "a grant's coins credited twice",
      (tx) =>
        tx.execute(sql`insert into wallet_ledger (id, user_id, seq, previous_seq, previous_balance, amount, balance_after, kind, reference)
          select 'dup', user_id, seq + 1, seq, balance_after, 40, balance_after + 40, 'reward', reference from wallet_ledger where reference = ${grantId}`),
      'coins were credited once',
    ],
    [
      'a granted pack more',
      (tx) =>
        tx.execute(sql`insert into user_packs (id, user_id, pack_id, grant_id, server_seed, server_seed_hash)
          select 'extra', user_id, pack_id, grant_id, server_seed, server_seed_hash from user_packs where grant_id = ${grantId} limit 1`),
      "grant's packs are owned packs",
    ],
    [
      'a pulled copy lost',
      (tx) => tx.execute(sql`delete from pulls where grant_id = ${grantId}`),
      "grant's collectibles are pulls",
    ],
    [
      'a promised count drifted',
      (tx) => tx.execute(sql`update packs set promised = promised + 1 where id = ${pack.id}`),
      'promised count is what open promises hold',
    ],
    [
      "a promise's granted count drifted",
      (tx) => tx.execute(sql`update reward_promises set granted = granted - 1 where key = 'round:inv'`),
      "a promise's granted count is its grants",
    ],
    [
      "a serial block's minted count drifted",
      (tx) => tx.execute(sql`update reward_serials set minted = minted - 1 where owner = 'round:inv'`),
      "serial block's minted count",
    ],
    [
      'a granted count drifted',
      (tx) => tx.execute(sql`update packs set granted = granted + 1 where id = ${pack.id}`),
      'counting its granted and promised packs',
    ],
  ];
  for (const [what, damage, words] of cases) {
    const report = await reportAfter(app, damage);
    t.ok(report.includes(named(words)), `${what}: reported as "${named(words)}" (${JSON.stringify(report)})`);
  }
});
