import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PROJECT_ROOT as projectRoot } from '../support/paths.js';

/**
 * `npm start` runs scripts/build.mjs --if-stale first. A production install (npm ci --omit=dev)
 * has no TypeScript: a built tree must start without it, and a stale or missing build must say
 * what to do instead of failing on a missing `tsc`.
 */

/** A tree like a production install: sources, scripts/build.mjs, maybe dist/, no node_modules. */
function productionTree(t: { teardown(fn: () => void): void }, built: boolean): string {
  const root = mkdtempSync(join(tmpdir(), 'pack-build-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'scripts'));
  mkdirSync(join(root, 'plugins'));
  copyFileSync(join(projectRoot, 'scripts', 'build.mjs'), join(root, 'scripts', 'build.mjs'));
  copyFileSync(join(projectRoot, 'package.json'), join(root, 'package.json'));
  writeFileSync(join(root, 'app.ts'), 'export {};\n');
  writeFileSync(join(root, 'plugins', 'thing.ts'), 'export {};\n');
  const past = new Date(Date.now() - 3_600_000);
  for (const file of ['app.ts', 'plugins/thing.ts', 'package.json', 'scripts/build.mjs'])
    utimesSync(join(root, file), past, past);
  if (built) {
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist', '.build-stamp'), 'built\n');
    const builtAt = new Date(past.getTime() + 60_000);
    utimesSync(join(root, 'dist', '.build-stamp'), builtAt, builtAt);
  }
  return root;
}

const ifStale = (root: string) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-stale'], { cwd: root, encoding: 'utf8' });

t.test('a built tree starts without TypeScript installed', async (t) => {
  const root = productionTree(t, true);
  const result = ifStale(root);
  t.equal(result.status, 0, result.stderr);
  t.equal(result.stderr, '');
});

t.test('a stale build without TypeScript says what to do', async (t) => {
  const root = productionTree(t, true);
  writeFileSync(join(root, 'plugins', 'thing.ts'), 'export const changed = true;\n');
  const result = ifStale(root);
  t.equal(result.status, 1);
  t.match(result.stderr, /dist\/ is older than the sources, and TypeScript is not installed.*npm run build/);
});

t.test('no build at all without TypeScript says what to do', async (t) => {
  const root = productionTree(t, false);
  const result = ifStale(root);
  t.equal(result.status, 1);
  t.match(result.stderr, /dist\/ has not been built.*npm ci && npm run build/);
});
