import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { generateSigningKeyPem } from '../plugins/app/sessions/keys.js';
import { startStandInProvider } from '../scripts/stand-in-provider.js';
import {
  BENCH_SERVER_ENV,
  type BenchDatabase,
  benchDatabase,
  databaseKind,
  type RunningServer,
  startServer,
} from './lib.js';
import { latencyPart } from './auth/latency.js';
import type { AuthBenchOptions } from './auth/options.js';
import { throughputPart } from './auth/throughput.js';

/**
 * Sessions of our own under load, against the built server on one database:
 *   npm run bench:auth -- --db embedded|external [--seconds 10 (at most 300)] [--connections 50] [--rounds 2]
 *     [--warmup 3] [--revoked 2000] [--revoked-external 20] [--parts throughput,latency]
 *
 * 1. `throughput`: what the revocation check on every authenticated request costs. GET /api/user
 *    with autocannon at `--connections`, `--seconds` a run, on three targets, in rounds whose
 *    order alternates (A B C, then C B A, ...) so that the machine's drift hits them alike:
 *      A  a server with AUTH_SESSIONS=false and an external HS256 token (bench/lib.ts);
 *      B  a server with sessions on (a generated Ed25519 key), `--revoked` sessions signed in and
 *         logged out plus `--revoked-external` external tokens logged out (whole-token hashes, so
 *         every external token is hashed and looked up), and the SAME external token as A: the
 *         revocation check is the only difference;
 *      C  server B with one of our own access tokens (EdDSA), for information.
 *    Each server runs on a database of its own (two embedded clusters, or two databases on the
 *    external server). The bar: B/A >= 0.95, the mean of the per-round ratios.
 * 2. `latency`: sign-in (POST /api/auth/mobile/token with a freshly minted Google ID token from the
 *    stand-in provider), refresh (POST /api/auth/token, form-encoded, each client rotating its
 *    own refresh token) and logout (POST /api/auth/logout of a session signed in beforehand), each
 *    with `--connections` clients looping for `--seconds`: count, median, p99, non-2xx, per
 *    request from the client's side (fetch with keep-alive, performance.now()).
 *    ID tokens are minted before the timed loop (RS256 signing costs the client about a
 *    millisecond of the CPU the server also needs); sessions for logout are signed in beforehand.
 *
 * Server B runs with AUTH_ACCESS_TTL=1 hour so that the revoked entries (kept for the access
 * lifetime after a logout) and C's token outlive any run; the per-address and per-account limits
 * of sign-in and the global limit are set out of reach.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '3' },
    revoked: { type: 'string', default: '2000' },
    'revoked-external': { type: 'string', default: '20' },
    parts: { type: 'string', default: 'throughput,latency' },
  },
});
const kind = databaseKind(values.db);
const positive = (name: string, value: string | undefined, min = 1) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min)
    throw new Error(`--${name} must be an integer >= ${min} (got ${value})`);
  return number;
};
const seconds = positive('seconds', values.seconds);
// ID tokens are minted before the timed loop and live 10 minutes.
if (seconds > 300) throw new Error('--seconds: at most 300');
const connections = positive('connections', values.connections);
const rounds = positive('rounds', values.rounds);
const warmupSeconds = positive('warmup', values.warmup, 0);
const revokedSessions = positive('revoked', values.revoked, 0);
const revokedExternal = positive('revoked-external', values['revoked-external'], 0);
const parts = new Set(String(values.parts).split(','));
for (const part of parts)
  if (part !== 'throughput' && part !== 'latency') throw new Error('--parts: a list of throughput, latency');
const command =
  `npm run bench:auth -- --db ${kind} --seconds ${seconds} --connections ${connections} --rounds ${rounds} --warmup ${warmupSeconds}` +
  ` --revoked ${revokedSessions} --revoked-external ${revokedExternal} --parts ${[...parts].join(',')}`;

const options: AuthBenchOptions = { seconds, connections, rounds, warmupSeconds, revokedSessions, revokedExternal };

const PORT_A = 3531;
const PORT_B = 3532;
const OUT_OF_REACH = '1000000';

console.log(
  `# Sessions benchmark on ${kind} PostgreSQL (Node ${process.version}, ${cpus().length} cores, ${new Date().toISOString()})`,
);
console.log(`\n    ${command}`);

const provider = await startStandInProvider('google');
const databases: BenchDatabase[] = [];
const servers: RunningServer[] = [];
let ok = true;
try {
  const sessionsEnv = {
    ...provider.env,
    AUTH_SESSIONS: 'true',
    AUTH_SESSION_PRIVATE_KEY: generateSigningKeyPem(),
    PUBLIC_BASE_URL: `http://127.0.0.1:${PORT_B}`,
    AUTH_ACCESS_TTL: '1 hour',
    AUTH_RATE_LIMIT_IP: OUT_OF_REACH,
    AUTH_RATE_LIMIT_SUBJECT: OUT_OF_REACH,
  };
  const databaseB = await benchDatabase(kind);
  databases.push(databaseB);
  const serverB = await startServer({ ...databaseB.env, ...BENCH_SERVER_ENV, ...sessionsEnv }, PORT_B);
  servers.push(serverB);
  if (parts.has('throughput')) {
    const databaseA = await benchDatabase(kind);
    databases.push(databaseA);
    const serverA = await startServer({ ...databaseA.env, ...BENCH_SERVER_ENV, AUTH_SESSIONS: 'false' }, PORT_A);
    servers.push(serverA);
    ok = (await throughputPart(serverA, serverB, provider, options)) && ok;
    // Server A is done: it no longer takes memory or CPU from part 2.
    await serverA.stop();
    servers.pop();
  }
  if (parts.has('latency')) ok = (await latencyPart(serverB, provider, options)) && ok;
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  await Promise.all(databases.map((database) => database.cleanup()));
  await provider.close();
}
if (!ok) process.exitCode = 1;
