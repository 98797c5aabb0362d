// Compiles the whole project, tests included, to .build/ (`npm test` runs it first): the suite then
// runs on JavaScript, so no test process and no server a test starts pays for loading TypeScript
// through tsx. It is also the type check: a type error stops the run. Skipped when nothing changed
// since the last build (no newer source, the same files), so `npm run test:pg` right after
// `npm test` does not check the whole program again. Compiled files whose source is gone are
// removed, so a renamed or deleted test never runs from a stale copy.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.build');
const stamp = join(out, '.build-stamp');
const config = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));
const SETTINGS = ['tsconfig.json', 'tsconfig.test.json', 'package.json'];

/** Every TypeScript source the build compiles, and the newest change among them and the settings. */
function sources() {
  const files = [];
  let newest = 0;
  const visit = (path) => {
    const info = statSync(path);
    if (info.isDirectory()) {
      for (const name of readdirSync(path)) if (name !== 'node_modules') visit(join(path, name));
    } else if (path.endsWith('.ts')) {
      files.push(relative(root, path));
      newest = Math.max(newest, info.mtimeMs);
    }
  };
  for (const entry of config.include) if (existsSync(join(root, entry))) visit(join(root, entry));
  for (const file of SETTINGS) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  return { list: files.sort().join('\n'), newest };
}

const before = sources();
const upToDate =
  existsSync(stamp) && statSync(stamp).mtimeMs >= before.newest && readFileSync(stamp, 'utf8') === before.list;
const started = new Date();
if (!upToDate) {
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.test.json')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const COMPILED = /\.(js|js\.map|d\.ts)$/;
function removeOrphans(folder) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      removeOrphans(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
    } else if (COMPILED.test(entry.name)) {
      const source = join(root, relative(out, path).replace(COMPILED, '.ts'));
      if (!existsSync(source)) rmSync(path);
    }
  }
}
if (existsSync(out)) removeOrphans(out);
// Written with the list it was built from, dated when the build began: a source saved while tsc
// ran is newer than the stamp, so the next run compiles it.
if (!upToDate) {
  writeFileSync(stamp, before.list);
  utimesSync(stamp, started, started);
}
