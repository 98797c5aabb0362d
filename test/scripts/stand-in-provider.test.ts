import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { standInPorts, startStandInProvider } from '../../scripts/stand-in-provider.js';
import { nodeArgsFor, PROJECT_ROOT } from '../support/paths.js';

/** `npm run stand-in-provider` as someone trying sign-in by hand meets it: its options and its token endpoint. */

const run = promisify(execFile);
const USAGE = 'usage: npm run stand-in-provider [-- --apple-port 4001 --google-port 4002]';

t.test('ports: the defaults, chosen ones, and a usage line for anything else', async (t) => {
  t.same(standInPorts([]), { apple: 4001, google: 4002 });
  t.same(standInPorts(['--apple-port', '5001', '--google-port', '0']), { apple: 5001, google: 0 });
  for (const args of [
    ['--bogus'],
    ['--apple-port'],
    ['--apple-port', 'x'],
    ['--google-port', '70000'],
    ['--apple-port', '-1'],
    ['extra'],
  ]) {
    const result = standInPorts(args);
    t.ok('problem' in result && result.problem.endsWith(USAGE), `${args.join(' ')}: refused with the usage line`);
  }
});

t.test('run with a wrong option, it exits 2 with the problem and the usage line, not a stack', async (t) => {
  const refused = await run(process.execPath, [...nodeArgsFor('scripts/stand-in-provider.ts'), '--apple-port', 'x'], {
    cwd: PROJECT_ROOT,
  }).then(
    () => undefined,
    (error: { code: number; stderr: string }) => error,
  );
  t.equal(refused?.code, 2);
  t.match(refused?.stderr, USAGE);
  t.notMatch(refused?.stderr, /\n\s+at /, 'no stack');
});

t.test('/id-token without sub or nonce says what it needs (400), with both it mints', async (t) => {
  const provider = await startStandInProvider('google');
  t.teardown(() => provider.close());
  for (const query of ['', '?sub=alice', '?nonce=n']) {
    const res = await fetch(`${provider.issuer}/id-token${query}`);
    t.equal(res.status, 400, query || 'no query');
    t.match(await res.text(), /sub and nonce are both required/);
  }
  const minted = await fetch(`${provider.issuer}/id-token?sub=alice&nonce=n`);
  t.equal(minted.status, 200);
  t.equal((await minted.text()).split('.').length, 3, 'a JWT');
  t.equal((await fetch(`${provider.issuer}/elsewhere`)).status, 404);
});
