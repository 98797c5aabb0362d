// Compiles the whole project, tests included, to .build/ (`npm test` runs it first): the suite then
// runs on JavaScript, so no test process and no server a test starts pays for loading TypeScript
// through tsx. It is also the type check: a type error stops the run. Incremental: an unchanged
// tree compiles in seconds. Compiled files whose source is gone are removed, so a renamed or
// deleted test never runs from a stale copy.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.build');
const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');

const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.test.json')], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) process.exit(result.status ?? 1);

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
