import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { PROJECT_ROOT, sourceFiles } from './support/paths.js';

// A plugin declares as Fastify `dependencies` exactly the plugins whose decorations it uses: Fastify
// then refuses to start with one missing or registered too late, and the declaration is a true map
// of who calls whom (docs/architecture.md draws it). Read from the code: each plugin's name and
// dependencies, the decorations each plugin makes, and the decorations each plugin file reads.

interface PluginFile {
  file: string;
  name: string;
  dependencies: string[];
  text: string;
}

const DECLARATION = /\{\s*name:\s*'([^']+)'(?:,\s*dependencies:\s*\[([^\]]*)\])?\s*,?\s*\}\s*,?\s*\)/g;
const DECORATION = /\.decorate(?:Reply|Request)?\(\s*'([A-Za-z]+)'/g;
const USE = /\b(?:fastify|app|instance|server)\.([A-Za-z]+)\b/g;

const plugins: PluginFile[] = sourceFiles('plugins').flatMap((file) => {
  const text = readFileSync(join(PROJECT_ROOT, file), 'utf8');
  if (!text.includes('fastify-plugin')) return [];
  const declarations = [...text.matchAll(DECLARATION)];
  return declarations.map((match) => ({
    file,
    name: match[1] as string,
    dependencies: [...(match[2] ?? '').matchAll(/'([^']+)'/g)].map((dependency) => dependency[1] as string),
    text,
  }));
});

/** Which plugin makes each decoration. */
const owner = new Map<string, string>();
for (const plugin of plugins) {
  for (const match of plugin.text.matchAll(DECORATION)) owner.set(match[1] as string, plugin.name);
}
/**
 * Plugins that register a library's plugin decorate outside our code too (`fastify.jwt`,
 * `fastify.rateLimit`, the swagger document): declaring one is not checked against what is seen.
 */
const libraryBacked = new Set(
  plugins.filter((plugin) => /\.register\(/.test(plugin.text)).map((plugin) => plugin.name),
);
const checkable = new Set(plugins.map((plugin) => plugin.name).filter((name) => !libraryBacked.has(name)));

/**
 * The access rule is registered before every other plugin, so that no route escapes it: it reads
 * authentication and the config when a request comes, and checks at ready that authentication is
 * there (plugins/app/access.ts).
 */
const LATE_BOUND: Record<string, string[]> = { access: ['auth', 'env'] };

/** Declared for the order of hooks, not for a decoration: Swagger UI's pages drop the API's policy that helmet set. */
const FOR_ORDER: Record<string, string[]> = { 'swagger-ui': ['helmet'] };

t.test('the walk finds the plugins and their decorations', async (t) => {
  t.ok(plugins.length >= 20, `${plugins.length} plugins`);
  t.equal(owner.get('wallets'), 'wallets');
  t.equal(owner.get('config'), 'env');
  t.equal(owner.get('db'), 'db');
  t.ok(libraryBacked.has('jwt') && libraryBacked.has('swagger'), 'plugins wrapping a library are told apart');
});

for (const plugin of plugins) {
  t.test(`${plugin.name} (${plugin.file}) declares the plugins it uses`, async (t) => {
    const used = new Set<string>();
    for (const match of plugin.text.matchAll(USE)) {
      const by = owner.get(match[1] as string);
      if (by && by !== plugin.name) used.add(by);
    }
    // Plugins of libraries decorate outside our code: their dependency is kept when declared.
    const declaredOurs = plugin.dependencies.filter(
      (dependency) => checkable.has(dependency) && !FOR_ORDER[plugin.name]?.includes(dependency),
    );
    const allowed = [...plugin.dependencies, ...(LATE_BOUND[plugin.name] ?? [])];
    t.same([...used].filter((name) => !allowed.includes(name)).sort(), [], 'none used undeclared');
    t.same(declaredOurs.filter((name) => !used.has(name)).sort(), [], 'none declared unused');
  });
}
