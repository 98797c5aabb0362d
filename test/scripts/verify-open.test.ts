import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { drawPack, serverSeedHash } from '../../plugins/app/packs/draw.js';
import { nodeArgsFor, PROJECT_ROOT } from '../support/paths.js';

/** `npm run verify-open` checks a saved open result from the file alone. */

const run = promisify(execFile);
const folder = mkdtempSync(join(tmpdir(), 'verify-open-'));
t.teardown(() => rmSync(folder, { recursive: true, force: true }));

const serverSeed = 'a1'.repeat(32);
const opened = drawPack({
  serverSeed,
  clientSeed: 'my seed',
  cardsPerPack: 3,
  pool: [
    { collectibleId: 'x', weight: 1, remaining: 3 },
    { collectibleId: 'y', weight: 2, remaining: 2 },
  ],
  serials: new Map([
    ['x', { blocks: [{ first: 1, count: 3 }], minted: 0, moved: new Map() }],
    ['y', { blocks: [{ first: 1, count: 2 }], minted: 0, moved: new Map() }],
  ]),
});
const fairness = {
  serverSeed,
  serverSeedHash: serverSeedHash(serverSeed),
  clientSeed: 'my seed',
  pool: opened.pool,
  draws: opened.draws,
};

function saved(name: string, content: unknown): string {
  const path = join(folder, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const verify = (path: string) =>
  run(process.execPath, [...nodeArgsFor('scripts/verify-open.ts'), path], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH },
  });

t.test('an honest open checks out, as the response envelope, its data or the fairness object', async (t) => {
  for (const [name, content] of [
    ['envelope.json', { data: { userPackId: 'u1', packId: 'p1', items: [], fairness } }],
    ['data.json', { userPackId: 'u1', fairness }],
    ['fairness.json', fairness],
  ] as const) {
    const { stdout } = await verify(saved(name, content));
    t.match(stdout, /checks out/, name);
    t.match(stdout, /all 3 draws recompute/);
  }
});

t.test('a tampered open is named and exits 1', async (t) => {
  const tampered = {
    ...fairness,
    draws: fairness.draws.map((draw, i) =>
      i === 0 ? { ...draw, collectibleId: draw.collectibleId === 'x' ? 'y' : 'x' } : draw,
    ),
  };
  await t.rejects(verify(saved('tampered.json', tampered)), {
    code: 1,
    stdout: /does NOT check out[\s\S]*draw 0: collectibleId/,
  });
  await t.rejects(verify(saved('other-seed.json', { ...fairness, serverSeedHash: serverSeedHash('b2'.repeat(32)) })), {
    code: 1,
    stdout: /serverSeedHash is not the SHA-256 of serverSeed/,
  });
});

t.test('a file that is no open result is refused with what was expected', async (t) => {
  await t.rejects(verify(saved('garbage.json', 'not json')), { code: 1, stderr: /cannot read .* as JSON/ });
  await t.rejects(verify(saved('other.json', { hello: 'world' })), { code: 1, stderr: /holds no open result/ });
  await t.rejects(verify(saved('shape.json', { ...fairness, pool: 'everything' })), {
    code: 1,
    stderr: /not an open's proof: \/pool Expected array/,
  });
  await t.rejects(verify(join(folder, 'missing.json')), { code: 1, stderr: /cannot read/ });
});
