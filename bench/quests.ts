import { parseArgs } from 'node:util';
import {
  apiCall,
  BENCH_SERVER_ENV,
  benchDatabase,
  benchToken,
  databaseKind,
  expectOk,
  median,
  percentile,
  type RunningServer,
  startServer,
} from './lib.js';

/**
 * Quests over the event log, against the built server:
 *   npm run bench:quests -- --db embedded|external [--rate 50] [--seconds 20] [--fans 200] [--packs 5] [--rounds 2] [--baseline DIR]
 *
 * 1. Event lag: `--rate` opens a second for `--seconds`, each by a fan for whom that open completes
 *    a quest (count 1 of pack.opened); after each open's response the fan reads the quest every
 *    20 ms until it is claimable. The lag is the time from the open's response to that read.
 * 2. Opening throughput: `--fans` fans open `--packs` packs each, all at once, on a server running
 *    the quests consumer with an active quest counting every open; and the same on a server
 *    without the event log (`--baseline DIR`: a built checkout of the project from before it),
 *    else with consumers off (EVENT_CONSUMERS=false, no quest). Fresh database for each, the two
 *    alternating `--rounds` times; the ratio is of the medians.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '20' },
    fans: { type: 'string', default: '200' },
    packs: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    baseline: { type: 'string' },
  },
});
const kind = databaseKind(values.db);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const fanCount = Number(values.fans);
const packsEach = Number(values.packs);
const rounds = Number(values.rounds);
const admin = benchToken({ sub: 'bench-admin', role: 'admin' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A free pack with enough copies for `packs` packs of one card, published. */
async function hotPack(api: (path: string) => string, packs: number): Promise<string> {
  const pack = await expectOk(
    'pack',
    apiCall(api('/admin/packs'), 'POST', admin, { name: 'Quest drop', price: 0, cardsPerPack: 1 }),
    201,
  );
  for (let i = 0; i < 5; i++) {
    const collectible = await expectOk(
      'collectible',
      apiCall(api('/admin/collectibles'), 'POST', admin, { name: `Card ${i}` }),
      201,
    );
    await expectOk(
      'add',
      apiCall(api(`/admin/packs/${pack.id}`), 'POST', admin, {
        action: 'addCollectible',
        collectibleId: collectible.id,
        quantity: Math.ceil(packs / 5) + 1,
      }),
    );
  }
  await expectOk('publish', apiCall(api(`/admin/packs/${pack.id}`), 'POST', admin, { action: 'publish' }));
  return pack.id as string;
}

/** An active platform quest: one open completes it; its reward is 1 coin. */
async function openQuest(api: (path: string) => string): Promise<string> {
  const reward = await expectOk(
    'reward',
    apiCall(api('/admin/rewards'), 'POST', admin, { name: 'Coin', coins: 1 }),
    201,
  );
  const quest = await expectOk(
    'quest',
    apiCall(api('/admin/quests'), 'POST', admin, {
      name: 'Open a pack',
      rewardId: reward.id,
      criteria: { kind: 'count', event: 'pack.opened', count: 1 },
    }),
    201,
  );
  await expectOk('publish quest', apiCall(api(`/admin/quests/${quest.id}`), 'POST', admin, { action: 'publish' }));
  return quest.id as string;
}

/** Fans who each own `packs` unopened packs of `packId`: their tokens and owned pack ids. */
async function fansWithPacks(
  api: (path: string) => string,
  packId: string,
  count: number,
  packs: number,
  prefix: string,
) {
  const fans = Array.from({ length: count }, (_, i) => ({
    token: benchToken({ sub: `${prefix}-${i}` }),
    owned: [] as string[],
  }));
  for (let start = 0; start < fans.length; start += 50) {
    await Promise.all(
      fans.slice(start, start + 50).map(async (fan) => {
        for (let n = 0; n < packs; n++) {
          const purchase = await expectOk('start', apiCall(api(`/packs/${packId}/purchase`), 'POST', fan.token), 201);
          const done = await expectOk(
            'complete',
            apiCall(api(`/packs/${packId}/purchase`), 'PUT', fan.token, { purchaseId: purchase.id }),
          );
          fan.owned.push((done.userPack as { id: string }).id);
        }
      }),
    );
  }
  return fans;
}

async function withServer<T>(
  env: Record<string, string>,
  root: string | undefined,
  work: (server: RunningServer) => Promise<T>,
) {
  const database = await benchDatabase(kind);
  try {
    const server = await startServer(
      { ...database.env, ...BENCH_SERVER_ENV, PURCHASE_RATE_LIMIT: '1000000', CRON_INTERNAL: 'false', ...env },
      3540,
      { root },
    );
    try {
      return await work(server);
    } finally {
      await server.stop();
    }
  } finally {
    await database.cleanup();
  }
}

/** Step 1: the lag from an open's response to its quest being claimable, at `rate` opens a second. */
async function measureLag(): Promise<number[]> {
  return withServer({ EVENT_CONSUMERS: 'true' }, undefined, async (server) => {
    const api = (path: string) => `${server.url}/api${path}`;
    const total = rate * seconds;
    const packId = await hotPack(api, total);
    const questId = await openQuest(api);
    const fans = await fansWithPacks(api, packId, total, 1, 'lag-fan');
    const lags: number[] = [];
    const running: Promise<void>[] = [];
    const started = performance.now();
    for (const [index, fan] of fans.entries()) {
      const due = started + (index * 1000) / rate;
      await sleep(Math.max(0, due - performance.now()));
      running.push(
        (async () => {
          await expectOk(
            'open',
            apiCall(api(`/packs/${packId}/open`), 'POST', fan.token, { userPackId: fan.owned[0] }),
          );
          const answered = performance.now();
          for (let attempt = 0; attempt < 500; attempt++) {
            const quest = await expectOk('read quest', apiCall(api(`/quests/${questId}`), 'GET', fan.token));
            if ((quest.progress as { claimable: boolean } | null)?.claimable) {
              lags.push(performance.now() - answered);
              return;
            }
            await sleep(20);
          }
          throw new Error('a quest was not claimable 10 s after its open');
        })(),
      );
    }
    await Promise.all(running);
    return lags;
  });
}

/** Step 2: opens a second with every fan opening at once. */
async function openingRate(withQuests: boolean, root: string | undefined): Promise<number> {
  return withServer({ EVENT_CONSUMERS: String(withQuests) }, root, async (server) => {
    const api = (path: string) => `${server.url}/api${path}`;
    const packId = await hotPack(api, fanCount * packsEach);
    if (withQuests) await openQuest(api);
    const fans = await fansWithPacks(api, packId, fanCount, packsEach, 'rate-fan');
    const started = performance.now();
    await Promise.all(
      fans.map(async (fan) => {
        for (const userPackId of fan.owned)
          await expectOk('open', apiCall(api(`/packs/${packId}/open`), 'POST', fan.token, { userPackId }));
      }),
    );
    return (fanCount * packsEach * 1000) / (performance.now() - started);
  });
}

const lags = await measureLag();
const withLog: number[] = [];
const without: number[] = [];
const appendOnly: number[] = [];
for (let round = 0; round < rounds; round++) {
  without.push(await openingRate(false, values.baseline));
  // With a baseline, the middle step too: the log appended, no consumer (what each part costs).
  if (values.baseline) appendOnly.push(await openingRate(false, undefined));
  withLog.push(await openingRate(true, undefined));
}
const ratio = median(withLog) / median(without);
console.log(`Quests on ${kind} PostgreSQL (Node ${process.version})\n`);
console.log('| measure | n | median | p99 | max |');
console.log('|---|---|---|---|---|');
console.log(
  `| lag: open answered → quest claimable (ms), ${rate} opens/s | ${lags.length} | ${median(lags).toFixed(0)} | ${percentile(lags, 99).toFixed(0)} | ${Math.max(...lags).toFixed(0)} |`,
);
console.log(
  `\nopens/s, ${fanCount} fans × ${packsEach} packs at once: ${values.baseline ? `before the event log (${values.baseline})` : 'consumers off, no quest'} ${without.map((n) => n.toFixed(0)).join(', ')}; event log + quests consumer ${withLog.map((n) => n.toFixed(0)).join(', ')}`,
);
if (appendOnly.length > 0)
  console.log(`event log appended, consumers off and no quest: ${appendOnly.map((n) => n.toFixed(0)).join(', ')}`);
console.log(
  `ratio of medians: ${ratio.toFixed(2)} (bar 0.9); lag p99 ${percentile(lags, 99).toFixed(0)} ms (bar 1000)`,
);
