import { sql } from 'drizzle-orm';
import t from 'tap';
import type { Database } from '../../../../plugins/app/database/index.js';
import { checkInvariants, INVARIANTS } from '../../../../plugins/app/invariants/checker.js';
import { buildTestApp } from '../../../support/app.js';
import { packInStatus } from '../../../support/catalog.js';
import { buyPack, expectStatus, signIn } from '../../../support/economy.js';
import { activeQuest, claim, drainQuests } from '../../../support/quests.js';

/** The quest invariants hold on claims made through the API, and each names the damage it guards against. */

class Rollback extends Error {}

t.test('the quest invariants', async (t) => {
  const app = await buildTestApp(t);
  const quest = await activeQuest(app, {
    criteria: { kind: 'count', event: 'purchase.completed', count: 1 },
    maxCompletions: 5,
  });
  const { pack } = await packInStatus(app, 'active', { pack: { price: 0, cardsPerPack: 1 }, pool: [{ quantity: 5 }] });
  const fan = await signIn(app, 'invariant-quest-fan');
  await buyPack(app, fan, pack.id);
  await drainQuests(app);
  expectStatus(await claim(app, fan.token, quest.id), 201, 'claim');
  t.same(
    (await checkInvariants(app.db.orm)).filter((result) => result.violations.length > 0),
    [],
    'every invariant holds after a claim',
  );

  const named = (words: string) => INVARIANTS.find((candidate) => candidate.name.includes(words))?.name as string;
  const cases: [string, string, (tx: Database) => Promise<unknown>][] = [
    [
      'a completion counted twice',
      'completions are its claimed periods',
      (tx) => tx.execute(sql`update quests set completions = completions + 1`),
    ],
    [
      'a claim pointing at a grant of another source',
      'every claimed period names the grant of its source key',
      (tx) => tx.execute(sql`update grants set source_key = 'admin:other:' || user_id where source_key like 'quest:%'`),
    ],
    [
      'a quest grant whose claim was forgotten',
      "every grant of a quest's source key is a claimed period",
      (tx) => tx.execute(sql`update quest_progress set grant_id = null, claimed_at = null`),
    ],
  ];
  for (const [what, words, damage] of cases) {
    let report: Record<string, number> = {};
    await app.db
      .transaction(async (tx) => {
        await damage(tx);
        report = Object.fromEntries(
          (await checkInvariants(tx)).filter((r) => r.violations.length > 0).map((r) => [r.name, r.violations.length]),
        );
        throw new Rollback();
      })
      .catch((error) => {
        if (!(error instanceof Rollback)) throw error;
      });
    t.ok(report[named(words)], `${what}: reported`, { report });
  }
});
