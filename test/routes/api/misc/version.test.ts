import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildCommit, packageVersion } from '../../../../plugins/app/version.js';
import { buildTestApp } from '../../../support/app.js';
import { PROJECT_ROOT } from '../../../support/paths.js';

/** GET /api/version: the release, the commit of the build, the API version and the API document's hash. */

t.test('GET /api/version answers the release, the API version and the hash of the document served', async (t) => {
  const app = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/version' });
  t.equal(res.statusCode, 200);
  const { success, data } = res.json();
  t.equal(success, true);
  t.same(Object.keys(data).sort(), ['apiVersion', 'commit', 'openapiSha256', 'version']);
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));
  t.equal(data.version, pkg.version, 'the release in package.json');
  t.equal(data.commit, null, 'run from the sources, no build recorded a commit');

  const docs = await app.inject({ method: 'GET', url: '/docs/json' });
  t.equal(docs.statusCode, 200);
  t.equal(data.openapiSha256, createHash('sha256').update(docs.rawPayload).digest('hex'), 'the hash of GET /docs/json');
  t.equal(data.apiVersion, docs.json().info.version, 'the document’s info.version');

  const again = await app.inject({ method: 'GET', url: '/api/version' });
  t.equal(again.json().data.openapiSha256, data.openapiSha256, 'computed once, the same every time');
  t.ok(res.headers['x-ratelimit-limit'], 'counted by the rate limit like any public read');
});

t.test('the commit is read from the record the build writes', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'build-info-'));
  t.teardown(() => rmSync(folder, { recursive: true, force: true }));
  const record = (content: string) => {
    const file = join(folder, `${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, content);
    return file;
  };
  const sha = 'a'.repeat(40);
  t.equal(buildCommit(record(JSON.stringify({ commit: sha, builtAt: '2026-11-27T00:00:00.000Z' }))), sha);
  t.equal(buildCommit(record(JSON.stringify({ commit: 'abc1234' }))), 'abc1234', 'a short commit');
  t.equal(buildCommit(record(JSON.stringify({ commit: null }))), null, 'a build that knew none');
  t.equal(buildCommit(record(JSON.stringify({ commit: 'not a commit; rm -rf' }))), null, 'not a commit');
  t.equal(buildCommit(record(JSON.stringify({ commit: 'A'.repeat(40) }))), null, 'git writes lowercase');
  t.equal(buildCommit(record('{not json')), null, 'unreadable');
  t.equal(buildCommit(join(folder, 'missing.json')), null, 'no record');
  t.equal(packageVersion(), JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')).version);
});
