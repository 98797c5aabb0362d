import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root, the same from the sources (tsx, tap) and from the build in dist/. */
function findProjectRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) throw new Error('package.json not found above the configuration module');
    folder = parent;
  }
  return folder;
}

export const PROJECT_ROOT = findProjectRoot();
