import { spawn } from 'node:child_process';
import { nodeArgsFor, PROJECT_ROOT } from './paths.js';

/** An operator script (`scripts/<name>.ts`) run as `npm run <name>` runs it, against one database. */

export function runScript(
  name: string,
  databaseUrl: string,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgsFor(`scripts/${name}.ts`), ...args], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
