import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import t, { type Test } from 'tap';
import { PROJECT_ROOT, sourceFiles } from './support/paths.js';

// The rules of the house, read from the code's own imports (docs/architecture.md draws them):
// dependencies point one way (config <- plugins/external <- plugins/app <- routes), a domain's
// repository is private to its folder, and no source file grows past 400 lines.

const ROOT = PROJECT_ROOT;
const SOURCE_ROOTS = ['app.ts', 'server.ts', 'config', 'plugins', 'routes', 'schemas', 'scripts', 'bench', 'db'];
const MAX_LINES = 400;

const IMPORT = /(?:^|[\s;])(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The project files a file imports, as paths from the root (`.js` specifiers name `.ts` files). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2];
    if (!specifier?.startsWith('.')) continue;
    found.push(relative(ROOT, join(dirname(join(ROOT, file)), specifier)).replace(/\.js$/, '.ts'));
  }
  return found;
}

function packagesOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((match) => match[1] ?? match[2] ?? '').filter((name) => !name.startsWith('.'));
}

const files = SOURCE_ROOTS.flatMap(sourceFiles);
const edges = files.flatMap((from) => importsOf(from).map((to) => ({ from, to })));

/** `plugins/app/wallets/repository.ts` -> `wallets`; undefined for a file that is no repository. */
function repositoryDomain(path: string): string | undefined {
  return /^plugins\/app\/([^/]+)\/(?:[^/]*-)?repository(?:\/|\.ts$)/.exec(path)?.[1];
}

const arrow = (edge: { from: string; to: string }) => `${edge.from} -> ${edge.to}`;

function none(t: Test, rule: string, violations: string[]) {
  t.same(violations, [], `${rule}: none`);
}

t.test('the walk reads the tree', async (t) => {
  t.ok(files.length > 100, `${files.length} source files`);
  t.ok(
    edges.some((edge) => edge.from === 'app.ts' && edge.to === 'routes/api/index.ts'),
    'it sees app.ts import the routes',
  );
  t.equal(repositoryDomain('plugins/app/wallets/repository.ts'), 'wallets');
  t.equal(repositoryDomain('plugins/app/packs/serials-repository.ts'), 'packs');
  t.equal(repositoryDomain('plugins/app/wallets/service.ts'), undefined);
});

t.test('config/ is plain TypeScript: no Fastify, nothing of the app', async (t) => {
  const inConfig = files.filter((file) => file.startsWith('config/'));
  none(t, 'config -> app', edges.filter((e) => e.from.startsWith('config/') && !e.to.startsWith('config/')).map(arrow));
  none(
    t,
    'config -> fastify',
    inConfig.flatMap((file) =>
      packagesOf(file)
        .filter((name) => name === 'fastify' || name.startsWith('@fastify/') || name === 'fastify-plugin')
        .map((name) => `${file} -> ${name}`),
    ),
  );
});

t.test('dependencies point one way: config <- plugins/external <- plugins/app <- routes', async (t) => {
  none(
    t,
    'plugins/external -> plugins/app',
    edges.filter((e) => e.from.startsWith('plugins/external/') && e.to.startsWith('plugins/app/')).map(arrow),
  );
  none(
    t,
    'plugins or schemas -> routes',
    edges.filter((e) => /^(plugins|schemas)\//.test(e.from) && e.to.startsWith('routes/')).map(arrow),
  );
  none(
    t,
    'schemas -> plugins',
    edges.filter((e) => e.from.startsWith('schemas/') && e.to.startsWith('plugins/')).map(arrow),
  );
});

t.test("a domain's repository is private to its folder", async (t) => {
  none(
    t,
    'cross-domain repository imports',
    edges
      .filter((e) => {
        const domain = repositoryDomain(e.to);
        return domain !== undefined && !e.from.startsWith(`plugins/app/${domain}/`);
      })
      .map(arrow),
  );
});

t.test(`no source file is longer than ${MAX_LINES} lines`, async (t) => {
  none(
    t,
    'long files',
    files
      .map((file) => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file }) => `${file} is too long`),
  );
});
