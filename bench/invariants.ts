import { execFile } from 'node:child_process';
import { parseArgs, promisify } from 'node:util';
import { runningEmbeddedUrl } from '../plugins/app/database/embedded-postgres.js';
import type { InvariantResult } from '../plugins/app/invariants/checker.js';
import {
  apiCall,
  BENCH_SERVER_ENV,
  benchDatabase,
  expectOk,
  benchToken,
  databaseKind,
  projectRoot,
  startServer,
} from './lib.js';

/**
 * How long `npm run check-invariants` takes on a database of many pulls, made through the API:
 *   npm run bench:invariants -- --db embedded|external [--fans 100] [--packs 100] [--cards 10]
 * `--fans` fans each buy and open `--packs` packs of `--cards` cards, spread over 20 packs
 * (100 x 100 x 10 = 100,000 pulls); then the checker runs as an operator runs it, and its time
 * and each check's are printed.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    fans: { type: 'string', default: '100' },
    packs: { type: 'string', default: '100' },
    cards: { type: 'string', default: '10' },
  },
});
const kind = databaseKind(values.db);
const fanCount = Number(values.fans);
const packsPerFan = Number(values.packs);
const cards = Number(values.cards);
const PACKS = 20;
const ENTRIES = 10;
const admin = benchToken({ sub: 'bench-admin', role: 'admin' });
const run = promisify(execFile);

const database = await benchDatabase(kind);
try {
  const server = await startServer(
    { ...database.env, ...BENCH_SERVER_ENV, PURCHASE_RATE_LIMIT: '1000000', CRON_INTERNAL: 'false' },
    3541,
  );
  try {
    const api = (path: string) => `${server.url}/api${path}`;
    const copies = Math.ceil((fanCount * packsPerFan * cards) / PACKS / ENTRIES) + cards;
    const collectibles: string[] = [];
    for (let i = 0; i < ENTRIES; i++)
      collectibles.push(
        (
          await expectOk(
            'create collectible',
            apiCall(api('/admin/collectibles'), 'POST', admin, { name: `Card ${i}` }),
            201,
          )
        ).id,
      );
    const packs: string[] = [];
    for (let p = 0; p < PACKS; p++) {
      const pack = await expectOk(
        'create pack',
        apiCall(api('/admin/packs'), 'POST', admin, { name: `Pack ${p}`, price: 0, cardsPerPack: cards }),
        201,
      );
      for (const [i, collectibleId] of collectibles.entries()) {
        await expectOk(
          'add',
          apiCall(api(`/admin/packs/${pack.id}`), 'POST', admin, {
            action: 'addCollectible',
            collectibleId,
            quantity: copies,
            weight: 1 + (i % 3),
          }),
        );
      }
      await expectOk('publish', apiCall(api(`/admin/packs/${pack.id}`), 'POST', admin, { action: 'publish' }));
      packs.push(pack.id as string);
    }
    const fans = Array.from({ length: fanCount }, (_, i) => benchToken({ sub: `bench-fan-${i}` }));
    // 100 fans at once are more than the pool serves without queueing, so the service sheds some
    // calls (503 overloaded); over 30,000 calls a few are refused five times running. This bench
    // only makes data: its fans keep retrying.
    const patient = { tries: 30 };
    const started = performance.now();
    await Promise.all(
      fans.map(async (token, fan) => {
        for (let n = 0; n < packsPerFan; n++) {
          const packId = packs[(fan + n) % PACKS] as string;
          const purchase = await expectOk(
            'start',
            apiCall(api(`/packs/${packId}/purchase`), 'POST', token, undefined, patient),
            201,
          );
          const completed = await expectOk(
            'complete',
            apiCall(api(`/packs/${packId}/purchase`), 'PUT', token, { purchaseId: purchase.id }, patient),
          );
          await expectOk(
            'open',
            apiCall(
              api(`/packs/${packId}/open`),
              'POST',
              token,
              { userPackId: (completed.userPack as { id: string }).id },
              patient,
            ),
          );
        }
      }),
    );
    const pulls = fanCount * packsPerFan * cards;
    process.stderr.write(
      `${pulls} pulls made through the API in ${Math.round((performance.now() - started) / 1000)} s\n`,
    );

    // The checker as an operator runs it, beside the running server.
    const url = database.env.DATABASE_URL ?? (await runningEmbeddedUrl(database.env.DATA_DIR as string));
    const checkStarted = performance.now();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/check-invariants.ts', '--json'], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH, DATABASE_URL: url },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout?: string; code?: number }) => {
      if (error.code === 1 && error.stdout) return { stdout: error.stdout };
      throw error;
    });
    const wallMs = performance.now() - checkStarted;
    const report = JSON.parse(stdout) as { ms: number; results: InvariantResult[] };
    const broken = report.results.filter((result) => result.violations.length > 0);

    console.log(
      `check-invariants on ${kind}, ${pulls} pulls (${fanCount * packsPerFan} opens), Node ${process.version}\n`,
    );
    console.log(
      `checks: ${Math.round(report.ms)} ms; the command, start to exit: ${Math.round(wallMs)} ms; violations: ${broken.length}\n`,
    );
    console.log('| check | ms |');
    console.log('|---|---|');
    for (const result of report.results) console.log(`| ${result.name} | ${Math.round(result.ms)} |`);
    for (const result of broken) console.log(`- FAIL ${result.name}: ${result.violations.slice(0, 3).join('; ')}`);
    if (broken.length > 0) process.exitCode = 1;
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
}
