import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fp from 'fastify-plugin';
import type { VersionInfo } from '../../schemas/misc.js';
import { PROJECT_ROOT } from '../../config/project-root.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** What GET /api/version answers: fixed once the app is ready. */
    versionInfo(): VersionInfo;
  }
}

const COMMIT = /^[0-9a-f]{7,40}$/;

/**
 * Where `npm run build` records the commit it built (scripts/build.mjs): beside the compiled app,
 * dist/build-info.json. Run from the sources (tsx, tests), the same path names a file at the
 * project root that no build writes, so the commit is unknown there.
 */
export const BUILD_INFO_FILE = new URL('../../build-info.json', import.meta.url);

/** The commit a build recorded; null when there is no record, or it does not name a commit. */
export function buildCommit(file: URL | string = BUILD_INFO_FILE): string | null {
  try {
    const commit = (JSON.parse(readFileSync(file, 'utf8')) as { commit?: unknown }).commit;
    return typeof commit === 'string' && COMMIT.test(commit) ? commit : null;
  } catch {
    return null;
  }
}

export function packageVersion(root = PROJECT_ROOT): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** SHA-256, hex, of the OpenAPI document as GET /docs/json serves it (compact JSON). */
export const documentHash = (document: unknown) => createHash('sha256').update(JSON.stringify(document)).digest('hex');

/**
 * The service's version, commit and API document hash. The hash is computed once, when the app
 * is ready: every route is known then, and the document no longer changes.
 */
export default fp(
  async (fastify) => {
    const version = packageVersion();
    const commit = buildCommit();
    let info: VersionInfo | undefined;
    fastify.addHook('onReady', async () => {
      const document = fastify.swagger() as { info?: { version?: string } };
      info = { version, commit, apiVersion: document.info?.version ?? version, openapiSha256: documentHash(document) };
    });
    fastify.decorate('versionInfo', () => {
      if (!info) throw new Error('the version is known once the app is ready');
      return info;
    });
  },
  { name: 'version', dependencies: ['swagger'] },
);
