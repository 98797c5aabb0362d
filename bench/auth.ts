import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { generateSigningKeyPem } from '../plugins/app/sessions/keys.js';
import { type StandInProvider, startStandInProvider } from '../scripts/stand-in-provider.js';
import {
  BENCH_SERVER_ENV,
  type BenchDatabase,
  benchDatabase,
  benchToken,
  databaseKind,
  median,
  percentile,
  processCpuMicros,
  type RunningServer,
  startServer,
} from './lib.js';

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

const PORT_A = 3531;
const PORT_B = 3532;
const BAR = 0.95;
const OUT_OF_REACH = '1000000';

// ---------------------------------------------------------------------------------------------
// HTTP, from the client's side. Node's fetch keeps connections alive (undici's global agent).

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function request(
  url: string,
  init: { method?: string; token?: string; json?: unknown; form?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  } else if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const res = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
}

function expectStatus(what: string, answer: Answer, status = 200): Answer {
  if (answer.status !== status)
    throw new Error(
      `${what} answered ${answer.status} (expected ${status}): ${JSON.stringify(answer.body).slice(0, 500)}`,
    );
  return answer;
}

interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
  userId: string;
}

interface SignInBody {
  provider: 'google';
  idToken: string;
  nonce: string;
}

const newNonce = () => randomBytes(16).toString('base64url');
const signInBody = (provider: StandInProvider, sub: string): SignInBody => {
  const nonce = newNonce();
  return { provider: 'google', idToken: provider.mint(sub, nonce), nonce };
};

async function signIn(server: RunningServer, body: SignInBody): Promise<SessionTokens> {
  const answer = expectStatus('sign-in', await request(`${server.url}/api/auth/mobile/token`, { json: body }));
  return answer.body.data as SessionTokens;
}

/** Runs `work(i)` for i in [0, count) with at most `width` at once. */
async function pooled(count: number, width: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Part 1: GET /api/user with autocannon.

interface Run {
  requestsPerSecond: number;
  requests: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  cpuMicrosPerRequest: number;
}

interface Target {
  name: string;
  label: string;
  server: RunningServer;
  token: string;
}

async function cannon(target: Target, durationSeconds: number): Promise<Run> {
  const pid = target.server.child.pid as number;
  const cpuBefore = processCpuMicros(pid);
  const result = await autocannon({
    url: `${target.server.url}/api/user`,
    connections,
    duration: durationSeconds,
    headers: { authorization: `Bearer ${target.token}` },
  });
  const cpu = processCpuMicros(pid) - cpuBefore;
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    cpuMicrosPerRequest: result.requests.total > 0 ? cpu / result.requests.total : Number.NaN,
  };
}

/** Fills server B's revoked set: sessions signed in and logged out, and external tokens logged out. */
async function fillRevokedSet(
  server: RunningServer,
  provider: StandInProvider,
): Promise<{ sessions: number; external: number; ms: number }> {
  const started = performance.now();
  const width = Math.min(connections, 20);
  let sampleAccess = '';
  await pooled(revokedSessions, width, async (i) => {
    const tokens = await signIn(server, signInBody(provider, `revoked-${i % 500}`));
    expectStatus(
      'logout',
      await request(`${server.url}/api/auth/logout`, { method: 'POST', token: tokens.accessToken }),
    );
    sampleAccess = tokens.accessToken;
  });
  let sampleExternal = '';
  await pooled(revokedExternal, width, async (i) => {
    const token = benchToken({ sub: `revoked-external-${i}` });
    expectStatus('logout (external token)', await request(`${server.url}/api/auth/logout`, { method: 'POST', token }));
    sampleExternal = token;
  });
  // The set really refuses what it holds.
  if (sampleAccess)
    expectStatus('a logged-out session token', await request(`${server.url}/api/user`, { token: sampleAccess }), 401);
  if (sampleExternal)
    expectStatus(
      'a logged-out external token',
      await request(`${server.url}/api/user`, { token: sampleExternal }),
      401,
    );
  return { sessions: revokedSessions, external: revokedExternal, ms: performance.now() - started };
}

async function throughputPart(
  serverA: RunningServer,
  serverB: RunningServer,
  provider: StandInProvider,
): Promise<boolean> {
  const external = benchToken({ sub: 'bench-reader' });
  const filled = await fillRevokedSet(serverB, provider);
  const own = await signIn(serverB, signInBody(provider, 'bench-reader-own'));
  const targets: Target[] = [
    { name: 'A', label: 'A: sessions off, external HS256 token', server: serverA, token: external },
    { name: 'B', label: 'B: sessions on, same external HS256 token', server: serverB, token: external },
    { name: 'C', label: 'C: sessions on, our EdDSA access token', server: serverB, token: own.accessToken },
  ];
  // Every target answers 200 before anything is measured (a 401 would be a fast, meaningless request).
  for (const target of targets)
    expectStatus(
      `GET /api/user on ${target.name}`,
      await request(`${target.server.url}/api/user`, { token: target.token }),
    );
  if (warmupSeconds > 0) for (const target of targets) await cannon(target, warmupSeconds);

  const results: Run[][] = targets.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1, 2] : [2, 1, 0];
    for (const index of order) results[index]?.push(await cannon(targets[index] as Target, seconds));
  }
  const [a, b, c] = results as [Run[], Run[], Run[]];
  const ratio = (of: Run[], round: number) =>
    (of[round] as Run).requestsPerSecond / (a[round] as Run).requestsPerSecond;
  const mean = (numbers: number[]) => numbers.reduce((sum, n) => sum + n, 0) / numbers.length;
  const ratiosB = a.map((_, round) => ratio(b, round));
  const ratiosC = a.map((_, round) => ratio(c, round));
  const meanB = mean(ratiosB);

  console.log(
    `\n## 1. The revocation check: GET /api/user, autocannon, ${connections} connections, ${rounds} rounds x ${seconds} s per target (warm-up ${warmupSeconds} s each)\n`,
  );
  const hashing =
    filled.external > 0
      ? 'whole-token sha256 entries, so B hashes the external token (no jti) on every request'
      : 'none: B never hashes the external token, the cheaper path';
  console.log(
    `Revoked set on server B: ${filled.sessions} logged-out sessions (sid entries) + ${filled.external} logged-out external tokens ` +
      `(${hashing}); filled in ${(filled.ms / 1000).toFixed(1)} s. Rounds alternate A B C / C B A.\n`,
  );
  console.log('| round | A req/s | B req/s | C req/s | B/A | C/A |');
  console.log('|---|---|---|---|---|---|');
  for (let round = 0; round < rounds; round++) {
    const rate = (of: Run[]) => Math.round((of[round] as Run).requestsPerSecond);
    console.log(
      `| ${round + 1} | ${rate(a)} | ${rate(b)} | ${rate(c)} | ${(ratiosB[round] as number).toFixed(3)} | ${(ratiosC[round] as number).toFixed(3)} |`,
    );
  }
  const meanRate = (of: Run[]) => Math.round(mean(of.map((r) => r.requestsPerSecond)));
  console.log(
    `| mean | ${meanRate(a)} | ${meanRate(b)} | ${meanRate(c)} | **${meanB.toFixed(3)}** | ${mean(ratiosC).toFixed(3)} |`,
  );
  console.log(
    '\n| target | CPU µs per request (server process) | p50 ms (mean) | p99 ms (worst round) | non-2xx | errors |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const [index, target] of targets.entries()) {
    const of = results[index] as Run[];
    console.log(
      `| ${target.label} | ${mean(of.map((r) => r.cpuMicrosPerRequest)).toFixed(1)} | ${mean(of.map((r) => r.p50)).toFixed(1)} | ${Math.max(...of.map((r) => r.p99))} | ${of.reduce((s, r) => s + r.non2xx, 0)} | ${of.reduce((s, r) => s + r.errors, 0)} |`,
    );
  }
  const failures = results.flat().reduce((sum, r) => sum + r.non2xx + r.errors, 0);
  console.log(
    `\nBar: B/A >= ${BAR} (mean of per-round ratios): ${meanB.toFixed(3)} (rounds ${ratiosB.map((r) => r.toFixed(3)).join(', ')}) -> **${meanB >= BAR ? 'PASS' : 'MISS'}**`,
  );
  const cpuRatio = mean(b.map((r) => r.cpuMicrosPerRequest)) / mean(a.map((r) => r.cpuMicrosPerRequest));
  console.log(`For information: the server process's CPU time per request, B/A = ${cpuRatio.toFixed(3)}.`);
  if (failures > 0)
    console.log(`WARNING: ${failures} non-2xx answers or errors during the runs: the figures above are not valid.`);
  return failures === 0;
}

// ---------------------------------------------------------------------------------------------
// Part 2: sign-in, refresh and logout latency with `connections` closed-loop clients.

interface Phase {
  name: string;
  latencies: number[];
  statuses: Map<number, number>;
  wallMs: number;
  notes: string[];
}

function newPhase(name: string): Phase {
  return { name, latencies: [], statuses: new Map(), wallMs: 0, notes: [] };
}

/** One timed request: its latency is recorded whatever the answer; network errors count as status 0. */
async function timed(phase: Phase, call: () => Promise<Answer>): Promise<Answer | undefined> {
  const started = performance.now();
  let answer: Answer | undefined;
  try {
    answer = await call();
  } catch {
    answer = undefined;
  }
  phase.latencies.push(performance.now() - started);
  const status = answer?.status ?? 0;
  phase.statuses.set(status, (phase.statuses.get(status) ?? 0) + 1);
  if (!answer) await new Promise((resolve) => setTimeout(resolve, 10));
  return answer;
}

/** Every client runs `step` until the deadline (or until `step` answers false). */
async function closedLoop(phase: Phase, step: (client: number) => Promise<boolean>): Promise<void> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async (_, client) => {
      while (performance.now() < deadline) if (!(await step(client))) break;
    }),
  );
  phase.wallMs = performance.now() - started;
}

async function latencyPart(server: RunningServer, provider: StandInProvider): Promise<boolean> {
  const url = server.url;
  const subOf = (client: number, n: number) => `client-${client}-${n % 10}`;
  const phases: Phase[] = [];

  // Sign-in. A short untimed run first (JIT, JWKS cache, first sign-ins create the users), which
  // also tells how many ID tokens to mint ahead for the timed loop.
  let warmupCount = 0;
  let warmupFailures = 0;
  const warmupMs = Math.max(1, Math.min(warmupSeconds, 2)) * 1000;
  const warmupEnd = performance.now() + warmupMs;
  await Promise.all(
    Array.from({ length: connections }, async (_, client) => {
      for (let n = 0; performance.now() < warmupEnd; n++) {
        const answer = await request(`${url}/api/auth/mobile/token`, {
          json: signInBody(provider, subOf(client, n)),
        }).catch(() => undefined);
        if (answer?.status !== 200) warmupFailures++;
        warmupCount++;
      }
    }),
  );
  const warmupRate = (warmupCount / warmupMs) * 1000;
  // Minting on the fly in the warm-up slowed it: twice its rate, and more are minted if needed.
  const perClient = Math.min(20_000, Math.ceil((warmupRate * seconds * 2) / connections) + 2);
  const mintStarted = performance.now();
  const minted: SignInBody[][] = Array.from({ length: connections }, (_, client) =>
    Array.from({ length: perClient }, (_, n) => signInBody(provider, subOf(client, n))),
  );
  const mintMs = performance.now() - mintStarted;
  const signInPhase = newPhase('sign-in (POST /api/auth/mobile/token)');
  let mintedLate = 0;
  await closedLoop(signInPhase, async (client) => {
    let body = minted[client]?.pop();
    if (!body) {
      body = signInBody(provider, subOf(client, mintedLate++));
    }
    const ready = body;
    await timed(signInPhase, () => request(`${url}/api/auth/mobile/token`, { json: ready }));
    return true;
  });
  signInPhase.notes.push(
    `${connections * perClient} ID tokens minted ahead in ${(mintMs / 1000).toFixed(1)} s (warm-up ran ${warmupRate.toFixed(0)}/s)`,
  );
  if (warmupFailures > 0)
    signInPhase.notes.push(`${warmupFailures} of ${warmupCount} sign-ins of the untimed warm-up failed`);
  if (mintedLate > 0)
    signInPhase.notes.push(`${mintedLate} ID tokens minted inside the timed loop (not enough minted ahead)`);
  phases.push(signInPhase);

  // Refresh: each client rotates its own refresh token; a refused one is replaced (untimed).
  const refreshTokens = await Promise.all(
    Array.from(
      { length: connections },
      async (_, client) => (await signIn(server, signInBody(provider, `refresher-${client}`))).refreshToken,
    ),
  );
  const refreshPhase = newPhase('refresh (POST /api/auth/token, form-encoded)');
  let replaced = 0;
  await closedLoop(refreshPhase, async (client) => {
    const presented = refreshTokens[client] as string;
    const answer = await timed(refreshPhase, () =>
      request(`${url}/api/auth/token`, { form: { grant_type: 'refresh_token', refresh_token: presented } }),
    );
    if (answer?.status === 200 && typeof answer.body.refresh_token === 'string') {
      refreshTokens[client] = answer.body.refresh_token;
    } else {
      replaced++;
      refreshTokens[client] = (await signIn(server, signInBody(provider, `refresher-${client}`))).refreshToken;
    }
    return true;
  });
  if (replaced > 0)
    refreshPhase.notes.push(`${replaced} refresh tokens refused and replaced by a new sign-in (untimed)`);
  phases.push(refreshPhase);

  // Logout: sessions signed in beforehand, as many as the faster of the two phases above would
  // end in the time, plus a margin.
  const rateOf = (phase: Phase) => (phase.latencies.length / phase.wallMs) * 1000;
  const poolSize = Math.min(
    200_000,
    Math.ceil(Math.max(rateOf(signInPhase), rateOf(refreshPhase)) * seconds * 1.5) + connections * 2,
  );
  const poolStarted = performance.now();
  const pool: string[] = [];
  await pooled(poolSize, connections, async (i) => {
    pool.push((await signIn(server, signInBody(provider, `leaver-${i % (connections * 10)}`))).accessToken);
  });
  const poolMs = performance.now() - poolStarted;
  const logoutPhase = newPhase('logout (POST /api/auth/logout)');
  let ranOut = false;
  await closedLoop(logoutPhase, async () => {
    const token = pool.pop();
    if (!token) {
      ranOut = true;
      return false;
    }
    await timed(logoutPhase, () => request(`${url}/api/auth/logout`, { method: 'POST', token }));
    return true;
  });
  logoutPhase.notes.push(`${poolSize} sessions signed in beforehand in ${(poolMs / 1000).toFixed(1)} s`);
  if (ranOut)
    logoutPhase.notes.push(`the sessions ran out after ${(logoutPhase.wallMs / 1000).toFixed(1)} s of ${seconds} s`);
  phases.push(logoutPhase);

  console.log(
    `\n## 2. Sign-in, refresh and logout: ${connections} concurrent clients, ${seconds} s each (fetch, keep-alive; client-side latency)\n`,
  );
  console.log('| operation | requests | per second | median ms | p99 ms | errors (non-2xx) |');
  console.log('|---|---|---|---|---|---|');
  let failures = 0;
  for (const phase of phases) {
    const errors = [...phase.statuses].filter(([status]) => status < 200 || status >= 300);
    const errorCount = errors.reduce((sum, [, count]) => sum + count, 0);
    failures += errorCount;
    const detail =
      errors.length > 0
        ? ` (${errors.map(([status, count]) => `${status === 0 ? 'network' : status}: ${count}`).join(', ')})`
        : '';
    const n = phase.latencies.length;
    console.log(
      `| ${phase.name} | ${n} | ${rateOf(phase).toFixed(0)} | ${n ? median(phase.latencies).toFixed(1) : '-'} | ${n ? percentile(phase.latencies, 99).toFixed(1) : '-'} | ${errorCount}${detail} |`,
    );
  }
  console.log('');
  for (const phase of phases) for (const note of phase.notes) console.log(`- ${phase.name.split(' ')[0]}: ${note}`);
  return failures === 0;
}

// ---------------------------------------------------------------------------------------------

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
    ok = (await throughputPart(serverA, serverB, provider)) && ok;
    // Server A is done: it no longer takes memory or CPU from part 2.
    await serverA.stop();
    servers.pop();
  }
  if (parts.has('latency')) ok = (await latencyPart(serverB, provider)) && ok;
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  await Promise.all(databases.map((database) => database.cleanup()));
  await provider.close();
}
if (!ok) process.exitCode = 1;
