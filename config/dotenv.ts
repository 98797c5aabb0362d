import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/** `.env` in the working directory, when there is one: the real process reads it, tests never do. */
export function readDotenv(): Record<string, string> {
  try {
    return parseEnv(readFileSync('.env', 'utf8')) as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
}
