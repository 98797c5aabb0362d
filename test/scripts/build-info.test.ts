import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildCommit } from '../../plugins/app/version.js';
import { PROJECT_ROOT } from '../support/paths.js';

/**
 * `npm run build` records the commit it built in dist/build-info.json, which GET /api/version
 * reads: SOURCE_COMMIT when the build environment gives it, else the checkout's HEAD, else null.
 */

/** A tiny project outside any git checkout, with TypeScript installed. */
function tinyProject(t: { teardown(fn: () => void): void }): string {
  const root = mkdtempSync(join(tmpdir(), 'pack-build-info-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'scripts'));
  copyFileSync(join(PROJECT_ROOT, 'scripts', 'build.mjs'), join(root, 'scripts', 'build.mjs'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'tiny', version: '1.0.0', type: 'module' }));
  writeFileSync(
    join(root, 'tsconfig.build.json'),
    JSON.stringify({ compilerOptions: { outDir: 'dist', module: 'nodenext', target: 'es2022' }, include: ['app.ts'] }),
  );
  writeFileSync(join(root, 'app.ts'), 'export const app = 1;\n');
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}

const build = (root: string, env: Record<string, string>) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
  });

t.test('SOURCE_COMMIT is recorded; outside a checkout without it, null', async (t) => {
  const root = tinyProject(t);
  const sha = '0123456789abcdef0123456789abcdef01234567';
  const given = build(root, { SOURCE_COMMIT: sha.toUpperCase() });
  t.equal(given.status, 0, given.stderr + given.stdout);
  const file = join(root, 'dist', 'build-info.json');
  t.equal(JSON.parse(readFileSync(file, 'utf8')).commit, sha, 'recorded, in git’s lowercase');
  t.equal(buildCommit(file), sha, 'and read back as GET /api/version reads it');

  const bogus = build(root, { SOURCE_COMMIT: 'main; rm -rf /' });
  t.equal(bogus.status, 0);
  t.equal(buildCommit(file), null, 'a value that is not a commit is not recorded');

  const none = build(root, {});
  t.equal(none.status, 0);
  t.equal(JSON.parse(readFileSync(file, 'utf8')).commit, null, 'no checkout, no SOURCE_COMMIT: null');
});
