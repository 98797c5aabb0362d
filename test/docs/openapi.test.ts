import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { validate } from '@readme/openapi-parser';
import t from 'tap';
import { generateOpenApiDocument } from '../../scripts/openapi-document.js';

const run = promisify(execFile);
const committedPath = new URL('../../docs/openapi.json', import.meta.url);

t.test('docs/openapi.json is current (run `npm run openapi` after changing a route)', async (t) => {
  const committed = readFileSync(committedPath, 'utf8');
  t.equal(committed, await generateOpenApiDocument());
});

t.test('the document is valid OpenAPI 3.1', async (t) => {
  const document = JSON.parse(readFileSync(committedPath, 'utf8'));
  t.equal(document.openapi, '3.1.0');
  const result = await validate(document);
  t.ok(result.valid, result.valid ? 'valid' : JSON.stringify(result.errors, null, 2));
});

t.test('every operation has tags, a summary, an operationId and a 500 response; 429 unless exempt', async (t) => {
  const document = JSON.parse(readFileSync(committedPath, 'utf8'));
  const operations = Object.entries(document.paths as Record<string, Record<string, Record<string, unknown>>>).flatMap(
    ([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ name: `${method} ${path}`, operation })),
  );
  t.ok(operations.length >= 4);
  for (const { name, operation } of operations) {
    t.ok((operation.tags as string[] | undefined)?.length, `${name} has tags`);
    t.ok(operation.summary, `${name} has a summary`);
    t.ok(operation.operationId, `${name} has an operationId`);
    const responses = operation.responses as Record<string, unknown>;
    t.ok(responses['500'], `${name} declares 500`);
    // Health probes are exempt from the rate limit, and so declare no 429.
    t.equal(Boolean(responses['429']), !name.includes('/api/health'), `${name}: 429 declared exactly when rate limited`);
  }
  t.ok(document.components.securitySchemes.bearerAuth, 'bearer scheme');
  const tagNames = (document.tags as { name: string }[]).map((tag) => tag.name);
  for (const tag of ['Auth', 'Admin', 'Teams', 'Packs', 'Locker room', 'Wallets', 'Cron', 'Webhooks', 'Misc']) {
    t.ok(tagNames.includes(tag), `tag ${tag}`);
  }
});

t.test('spectral lint (spectral:oas) reports zero errors', async (t) => {
  const bin = new URL('../../node_modules/.bin/spectral', import.meta.url).pathname;
  const { stdout } = await run(bin, ['lint', committedPath.pathname, '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet'], {
    cwd: new URL('../..', import.meta.url).pathname,
  }).catch((error: { code?: number; stdout?: string }) => {
    // Spectral exits 1 when it finds errors and prints them; anything else means it did not run.
    if (error.code !== 1 || !error.stdout) throw error;
    return { stdout: error.stdout };
  });
  const problems = JSON.parse(stdout) as { severity: number; code: string; message: string; path: string[] }[];
  const errors = problems.filter((problem) => problem.severity === 0);
  t.same(errors, [], 'no spectral errors');
  const warnings = problems.filter((problem) => problem.severity === 1).map((p) => `${p.code} at ${p.path.join('.')}`);
  t.same(warnings, [], 'no spectral warnings');
});
