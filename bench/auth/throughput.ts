import autocannon from 'autocannon';
import type { StandInProvider } from '../../scripts/stand-in-provider.js';
import { benchToken, processCpuMicros, type RunningServer } from '../lib.js';
import { expectStatus, pooled, request, signIn, signInBody } from './client.js';
import type { AuthBenchOptions } from './options.js';

// Part 1: GET /api/user with autocannon.

const BAR = 0.95;

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

async function cannon(target: Target, durationSeconds: number, connections: number): Promise<Run> {
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
  options: AuthBenchOptions,
): Promise<{ sessions: number; external: number; ms: number }> {
  const { connections, revokedSessions, revokedExternal } = options;
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

export async function throughputPart(
  serverA: RunningServer,
  serverB: RunningServer,
  provider: StandInProvider,
  options: AuthBenchOptions,
): Promise<boolean> {
  const { seconds, connections, rounds, warmupSeconds } = options;
  const external = benchToken({ sub: 'bench-reader' });
  const filled = await fillRevokedSet(serverB, provider, options);
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
  if (warmupSeconds > 0) for (const target of targets) await cannon(target, warmupSeconds, connections);

  const results: Run[][] = targets.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1, 2] : [2, 1, 0];
    for (const index of order) results[index]?.push(await cannon(targets[index] as Target, seconds, connections));
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
