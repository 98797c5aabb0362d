import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../config/project-root.js';

export { PROJECT_ROOT };

/** True when the suite runs from its compiled copy in .build/ (`npm test`), false under tsx (`npm run test:file`). */
export const COMPILED = import.meta.url.endsWith('.js');

/**
 * The node arguments that run a project file (`server.ts`, `scripts/token.ts`) from PROJECT_ROOT
 * the way this suite runs: compiled when the suite is, through tsx otherwise.
 */
export function nodeArgsFor(sourceFile: string): string[] {
  return COMPILED
    ? [join(PROJECT_ROOT, '.build', sourceFile.replace(/\.ts$/, '.js'))]
    : ['--import', 'tsx', join(PROJECT_ROOT, sourceFile)];
}

/**
 * The TypeScript and .mjs sources under `path` (a file or a folder, from PROJECT_ROOT), as paths
 * from PROJECT_ROOT; declaration files and committed migrations are not sources.
 */
export function sourceFiles(path: string): string[] {
  let isFile: boolean;
  try {
    isFile = statSync(join(PROJECT_ROOT, path)).isFile();
  } catch {
    return [];
  }
  if (isFile) return /\.(ts|mjs)$/.test(path) && !path.endsWith('.d.ts') ? [path] : [];
  if (path === 'db/migrations' || path.endsWith('node_modules')) return [];
  return readdirSync(join(PROJECT_ROOT, path)).flatMap((name) => sourceFiles(join(path, name)));
}
