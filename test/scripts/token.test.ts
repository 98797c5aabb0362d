import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { bearer, buildTestApp, TEST_SECRET } from '../support/app.js';
import { nodeArgsFor, PROJECT_ROOT } from '../support/paths.js';

/** `npm run token` mints tokens that the app, configured with the same secret, accepts. */

const run = promisify(execFile);

async function mint(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [...nodeArgsFor('scripts/token.ts'), ...args], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH, AUTH_JWT_SECRET: TEST_SECRET, ...env },
  });
}

t.test('a user token and an admin token work against the app', async (t) => {
  const app = await buildTestApp(t);
  const user = (await mint(['--sub', 'carol', '--name', 'Carol'])).stdout.trim();
  const admin = (await mint(['--sub', 'root', '--admin', '--ttl', '5m'])).stdout.trim();

  const me = await app.inject({ url: '/api/user', headers: bearer(user) });
  t.equal(me.statusCode, 200);
  t.match(me.json().data, { id: 'carol', displayName: 'Carol', isAdmin: false });

  const root = await app.inject({ url: '/api/user', headers: bearer(admin) });
  t.equal(root.json().data.isAdmin, true);

  const payload = JSON.parse(Buffer.from(admin.split('.')[1] as string, 'base64url').toString());
  t.ok(payload.exp - payload.iat <= 300 && payload.exp - payload.iat >= 299, '--ttl 5m');
});

t.test('refuses without --sub, with a bad --ttl, or without a shared secret', async (t) => {
  await t.rejects(mint([]), { code: 1 });
  await t.rejects(mint(['--sub', 'x', '--ttl', 'forever']), { code: 1, stderr: /--ttl/ });
  await t.rejects(mint(['--sub', 'x'], { AUTH_JWT_SECRET: '', AUTH_JWKS_URL: 'https://idp.example.com/jwks.json' }), {
    code: 1,
    stderr: /HS256 secret/,
  });
});

t.test('an unknown or incomplete option prints what is wrong and the usage line, not a stack', async (t) => {
  for (const args of [['--bogus'], ['--sub'], ['--sub', 'x', '--ttl']]) {
    const refused = await mint(args).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    t.equal(refused?.code, 1, args.join(' '));
    t.match(refused?.stderr, /usage: npm run token -- --sub <subject>/, `${args.join(' ')}: the usage line`);
    t.notMatch(refused?.stderr, /ERR_PARSE_ARGS|\n\s+at /, `${args.join(' ')}: no stack`);
  }
});
