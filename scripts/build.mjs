// Compiles the service to dist/ with TypeScript (`npm run build`). With --if-stale (npm start's
// prestart) it compiles only when a source is newer than the last build, so a built tree installed
// for production (npm ci --omit=dev: no TypeScript) starts as it is. Plain JavaScript: it must run
// where no TypeScript tooling is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');
const SOURCE_DIRECTORIES = ['config', 'plugins', 'routes', 'schemas', 'db', 'scripts'];
const SOURCE_FILES = ['app.ts', 'server.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function newestSource() {
  let newest = 0;
  const visit = (path) => {
    const info = statSync(path);
    if (info.isDirectory()) {
      for (const name of readdirSync(path)) visit(join(path, name));
    } else if (path.endsWith('.ts') || SOURCE_FILES.some((file) => path === join(root, file))) {
      newest = Math.max(newest, info.mtimeMs);
    }
  };
  for (const file of SOURCE_FILES) if (existsSync(join(root, file))) visit(join(root, file));
  for (const directory of SOURCE_DIRECTORIES) if (existsSync(join(root, directory))) visit(join(root, directory));
  return newest;
}

/**
 * The commit being built, for GET /api/version: SOURCE_COMMIT when the build environment gives it
 * (an image built without the .git folder: pass it as a build argument), else the checkout's HEAD;
 * null when neither is known.
 */
function builtCommit() {
  const given = process.env.SOURCE_COMMIT?.trim().toLowerCase();
  if (given) return /^[0-9a-f]{7,40}$/.test(given) ? given : null;
  const git = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' });
  const head = git.status === 0 ? git.stdout.trim() : '';
  return /^[0-9a-f]{40}$/.test(head) ? head : null;
}

if (process.argv.includes('--if-stale') && existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource())
  process.exit(0);

let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  console.error(
    existsSync(stamp)
      ? 'dist/ is older than the sources, and TypeScript is not installed to rebuild it. Build where the dev dependencies are installed (npm ci && npm run build), then install for production (npm prune --omit=dev).'
      : 'dist/ has not been built, and TypeScript is not installed (npm ci --omit=dev). Build first: npm ci && npm run build, then npm prune --omit=dev.',
  );
  process.exit(1);
}
// The stamp carries the build's start time: a source saved while tsc ran is still newer than it.
const started = new Date();
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(
  join(root, 'dist', 'build-info.json'),
  `${JSON.stringify({ commit: builtCommit(), builtAt: started.toISOString() })}\n`,
);
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
