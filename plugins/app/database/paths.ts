import { join } from 'node:path';
import { PROJECT_ROOT } from '../../../config/project-root.js';

export const MIGRATIONS_FOLDER = join(PROJECT_ROOT, 'db', 'migrations');
export const CACHE_FOLDER = join(PROJECT_ROOT, 'node_modules', '.cache', 'pack-service');
