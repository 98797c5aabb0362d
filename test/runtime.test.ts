import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { PROJECT_ROOT } from './support/paths.js';

// The supported runtime is said in three places (package.json `engines`, .nvmrc for version
// managers and CI, the README); the suite holds them together and fails on a Node it does not
// support, so a green run is a run on a supported Node.

const engines = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')).engines.node as string;
const pinned = readFileSync(join(PROJECT_ROOT, '.nvmrc'), 'utf8').trim().replace(/^v/, '');

function parseVersion(version: string): [number, number, number] {
  const parts = version.replace(/^v/, '').split('.').map(Number);
  return [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0];
}

/** `^24.11.0`: the same major, at least that minor and patch. */
function satisfiesCaret(version: string, range: string): boolean {
  const [major, minor, patch] = parseVersion(version);
  const [wantMajor, wantMinor, wantPatch] = parseVersion(range.slice(1));
  if (major !== wantMajor) return false;
  return minor !== wantMinor ? minor > wantMinor : patch >= wantPatch;
}

t.test('engines is one caret range on an LTS line', async (t) => {
  t.match(engines, /^\^\d+\.\d+\.\d+$/);
  t.equal(parseVersion(engines.slice(1))[0] % 2, 0, 'an even major: a line that becomes LTS');
  t.ok(satisfiesCaret('24.11.0', '^24.11.0'));
  t.ok(satisfiesCaret('24.21.3', '^24.11.0'));
  t.notOk(satisfiesCaret('24.10.9', '^24.11.0'));
  t.notOk(satisfiesCaret('20.20.2', '^24.11.0'));
  t.notOk(satisfiesCaret('26.0.0', '^24.11.0'));
});

t.test('the version CI pins is one engines allows, and the README says the same', async (t) => {
  t.ok(satisfiesCaret(pinned, engines), `.nvmrc ${pinned} satisfies ${engines}`);
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const [major, minor] = parseVersion(engines.slice(1));
  t.match(readme, `Node ${major} LTS (${major}.${minor} or later`, 'the README names the supported line');
});

t.test('this suite runs on a supported Node', async (t) => {
  t.ok(satisfiesCaret(process.versions.node, engines), `Node ${process.versions.node} satisfies ${engines}`);
});
