import type { StandInProvider } from '../../scripts/stand-in-provider.js';
import { median, percentile, type RunningServer } from '../lib.js';
import { type Answer, pooled, request, type SignInBody, signIn, signInBody } from './client.js';
import type { AuthBenchOptions } from './options.js';

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
async function closedLoop(
  phase: Phase,
  options: AuthBenchOptions,
  step: (client: number) => Promise<boolean>,
): Promise<void> {
  const { seconds, connections } = options;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async (_, client) => {
      while (performance.now() < deadline) if (!(await step(client))) break;
    }),
  );
  phase.wallMs = performance.now() - started;
}

export async function latencyPart(
  server: RunningServer,
  provider: StandInProvider,
  options: AuthBenchOptions,
): Promise<boolean> {
  const { seconds, connections, warmupSeconds } = options;
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
  await closedLoop(signInPhase, options, async (client) => {
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
  await closedLoop(refreshPhase, options, async (client) => {
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
  await closedLoop(logoutPhase, options, async () => {
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
