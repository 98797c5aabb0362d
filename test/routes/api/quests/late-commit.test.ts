import t from 'tap';
import type { App } from '../../../../app.js';
import type { Database } from '../../../../plugins/app/database/index.js';
import { buildTestApp } from '../../../support/app.js';
import { signIn } from '../../../support/economy.js';
import { activeQuest, drainQuests, progressRows } from '../../../support/quests.js';

/**
 * An event whose transaction took its id first and commits last still counts for its quest: the
 * consumer does not move past it while its transaction may still commit.
 */

const purchased = (app: App, tx: Database, userId: string, purchaseId: string) =>
  app.events.append(tx, {
    type: 'purchase.completed',
    userId,
    subject: purchaseId,
    data: { purchaseId, packId: 'p', price: 1 },
  });

t.test('an event committed late (lower id, later commit) is still counted', async (t) => {
  const app = await buildTestApp(t);
  const [early, late] = await Promise.all([signIn(app, 'fan-lower-id'), signIn(app, 'fan-higher-id')]);
  const quest = await activeQuest(app, { criteria: { kind: 'count', event: 'purchase.completed', count: 1 } });

  let appended!: () => void;
  let commit!: () => void;
  const appendedFirst = new Promise<void>((resolve) => {
    appended = resolve;
  });
  const mayCommit = new Promise<void>((resolve) => {
    commit = resolve;
  });
  const held = app.db.transaction(async (tx) => {
    await purchased(app, tx, early.id, 'lower-id');
    appended();
    await mayCommit;
  });
  await appendedFirst;
  await app.db.transaction((tx) => purchased(app, tx, late.id, 'higher-id'));
  // The consumer runs while the lower id is uncommitted: it must not move past it.
  await app.quests.consumer.drain();
  commit();
  await held;
  await drainQuests(app);
  t.match(await progressRows(app, quest.id, early.id), [{ progress: 1 }], 'the late commit counted');
  t.match(await progressRows(app, quest.id, late.id), [{ progress: 1 }], 'and the early one, once');
});
