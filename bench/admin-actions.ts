import { parseArgs } from 'node:util';
import { BENCH_SERVER_ENV, benchDatabase, benchToken, databaseKind, median, percentile, startServer } from './lib.js';
import { seedCatalog } from './seed.js';

/**
 * Admin actions in a row: `--count` sequential POST /api/admin/packs/{id}
 * calls, each a real transaction with the pack's row lock and an audit row, against the built
 * server on one database:
 *   npm run bench:admin -- --db embedded|external [--count 1000]
 * The mix cycles addCollectible (new entry / changed quantity / changed weight), removeCollectible,
 * and archive + restore + publish on other packs, so every action of the state machine is timed.
 */

const { values } = parseArgs({
  options: { db: { type: 'string', default: 'embedded' }, count: { type: 'string', default: '1000' } },
});
const kind = databaseKind(values.db);
const count = Number(values.count);
const token = benchToken({ sub: 'bench-admin', role: 'admin' });

const database = await benchDatabase(kind);
try {
  const db = await database.open();
  const seeded = await seedCatalog(db, { active: 0, archived: 0, drafts: 40 });
  await db.close();
  const server = await startServer({ ...database.env, ...BENCH_SERVER_ENV }, 3511);
  try {
    const post = async (packId: string, body: unknown) => {
      const started = performance.now();
      const res = await fetch(`${server.url}/api/admin/packs/${packId}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${JSON.stringify(body)} answered ${res.status}`);
      return performance.now() - started;
    };
    // Each draft pack gets a pool that can fill a pack, so publish succeeds.
    const [first, second] = seeded.collectibleIds as [string, string];
    for (const packId of seeded.draftIds)
      await post(packId, { action: 'addCollectible', collectibleId: first, quantity: 100 });

    const byAction = new Map<string, number[]>();
    const timings: number[] = [];
    const record = (action: string, ms: number) => {
      timings.push(ms);
      byAction.set(action, [...(byAction.get(action) ?? []), ms]);
    };
    for (let i = 0; timings.length < count; i++) {
      const packId = seeded.draftIds[Math.floor(i / 4) % seeded.draftIds.length] as string;
      const step = i % 4;
      if (step === 0)
        record(
          'addCollectible',
          await post(packId, { action: 'addCollectible', collectibleId: second, quantity: 10 + i }),
        );
      else if (step === 1)
        record(
          'addCollectible',
          await post(packId, { action: 'addCollectible', collectibleId: second, weight: 1 + (i % 7) }),
        );
      else if (step === 2)
        record('removeCollectible', await post(packId, { action: 'removeCollectible', collectibleId: second }));
      else {
        record('publish', await post(packId, { action: 'publish' }));
        record('archive', await post(packId, { action: 'archive' }));
        record('restore', await post(packId, { action: 'restore' }));
      }
    }
    console.log(
      `${timings.length} admin actions in a row on ${kind} (one client, sequential, Node ${process.version})\n`,
    );
    console.log('| actions | n | median ms | p99 ms | max ms |');
    console.log('|---|---|---|---|---|');
    console.log(
      `| all | ${timings.length} | ${median(timings).toFixed(2)} | ${percentile(timings, 99).toFixed(2)} | ${Math.max(...timings).toFixed(2)} |`,
    );
    for (const [action, list] of byAction) {
      console.log(
        `| ${action} | ${list.length} | ${median(list).toFixed(2)} | ${percentile(list, 99).toFixed(2)} | ${Math.max(...list).toFixed(2)} |`,
      );
    }
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
}
