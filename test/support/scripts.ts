import { spawn } from 'node:child_process';

/** An operator script (`scripts/<name>.ts`) run as `npm run <name>` runs it, against one database. */

const projectRoot = new URL('../..', import.meta.url).pathname;

export function runScript(
  name: string,
  databaseUrl: string,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `scripts/${name}.ts`, ...args], {
      cwd: projectRoot,
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
