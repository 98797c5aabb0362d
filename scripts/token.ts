import { parseArgs } from 'node:util';
import { createSigner } from 'fast-jwt';
import { loadConfig } from '../config/index.js';

/**
 * Prints a development token signed with the configured HS256 secret:
 *   npm run token -- --sub alice [--admin] [--ttl 1h] [--name "Alice"]
 * `--admin` adds the AUTH_ADMIN_CLAIM claim (role=admin in development).
 */

const usage = 'usage: npm run token -- --sub <subject> [--admin] [--ttl 1h] [--name "Display Name"]';

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

const options = {
  sub: { type: 'string' },
  admin: { type: 'boolean', default: false },
  ttl: { type: 'string', default: '1h' },
  name: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;
let parsed: ReturnType<typeof parseArgs<{ options: typeof options }>>;
try {
  parsed = parseArgs({ options });
} catch (error) {
  // An unknown or malformed option: say so and how to call, not a stack.
  fail(`${(error as Error).message}\n${usage}`);
}
const { values } = parsed;
if (values.help) {
  console.log(usage);
  process.exit(0);
}
if (!values.sub) fail(usage);

const config = loadConfig(process.env, true);
const { keySource, adminClaim, issuer, audience } = config.auth;
if (keySource.kind !== 'secret') {
  fail('Tokens can be minted only with an HS256 secret; with a PEM key or JWKS, ask the identity provider.');
}
const ttl = /^(\d+)\s*([smhd])$/.exec(values.ttl);
if (!ttl) fail('--ttl takes a number and a unit: 30m, 1h, 7d');
const seconds = Number(ttl[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[ttl[2] as 's' | 'm' | 'h' | 'd'];

const claims: Record<string, unknown> = { sub: values.sub };
if (values.name) claims.name = values.name;
if (values.admin) {
  if (!adminClaim) fail('--admin needs AUTH_ADMIN_CLAIM (or list the subject in ADMIN_USER_IDS instead).');
  claims[adminClaim.name] = adminClaim.value;
}
const sign = createSigner({
  key: keySource.secret,
  algorithm: 'HS256',
  expiresIn: seconds * 1000,
  ...(issuer ? { iss: issuer } : {}),
  ...(audience ? { aud: audience } : {}),
});
console.log(sign(claims));
