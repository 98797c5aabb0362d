import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../plugins/app/database/index.js';
import {
  BENCH_SERVER_ENV,
  benchDatabase,
  benchToken,
  databaseKind,
  defaultLoadTool,
  fromAutocannon,
  load,
  type LoadResult,
  pinToCpu,
  startServer,
} from './lib.js';
import { SCORE_OFFSET } from '../plugins/app/leaderboards/ranks.js';
import { seedCatalog } from './seed.js';

/**
 * Leaderboards on a board of a million fans, against the built server:
 *   npm run bench:leaderboards -- --db embedded|external [--fans 1000000] [--seconds 10] [--connections 1,4,10] [--rounds 3]
 *
 * Seeds `--fans` users straight into a new database with a collector board of that many entries
 * (scores drawn from an exponential distribution in whole points: many ties, a long tail), the
 * rank structure counted from them, a frozen copy of the board (a closed week), and a final
 * league round with every fan in its standings.
 * 1. My rank and around-me (`/me?around=10`) for random fans on the live board, the frozen week
 *    and the round: autocannon at each of `--connections`, each request with the token of another
 *    fan; p50 / p99; and GET /api/user with the same tokens, the cost of a signed-in request.
 * 2. Top-100 of the live board against the cached catalog (`GET /api/packs`): wrk (or autocannon)
 *    at 50 connections, the two alternating for `--rounds` rounds, server on CPU 1 and wrk on CPU 0;
 *    the ratio of their mean throughputs.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    fans: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '1,4,10' },
    rounds: { type: 'string', default: '3' },
    tokens: { type: 'string', default: '20000' },
    /** Seed, print the database's URL and stop, keeping the database (for EXPLAIN). */
    'seed-only': { type: 'boolean', default: false },
  },
});
const kind = databaseKind(values.db);
const fans = Number(values.fans);
const seconds = Number(values.seconds);
const connectionCounts = String(values.connections).split(',').map(Number);
const rounds = Number(values.rounds);
const tokenCount = Math.min(Number(values.tokens), fans);
const LIVE = 'collectors:all-time';
const FROZEN_WEEK = '2020-W01';
const FROZEN = `collectors:week:${FROZEN_WEEK}`;
const ROUND = 'bench-round';
const BENCH_CRON_SECRET = 'bench-cron-secret-0123456789';
const fanId = (n: number) => `bench-fan-${String(n).padStart(7, '0')}`;

/** Fans seeded per statement: each stays within the service's query timeout (20 s), busy machine or not. */
const SEED_CHUNK = 100_000;

async function seedBoard(db: DatabaseHandle): Promise<void> {
  const started = performance.now();
  const run = (query: ReturnType<typeof sql>) => db.orm.execute(query);
  await run(sql`
    insert into leaderboards (key, kind, subject_id, "window", window_key, time_zone, entrants) values
      (${LIVE}, 'collectors', null, 'all-time', 'all-time', 'UTC', ${fans}),
      (${FROZEN}, 'collectors', null, 'week', ${FROZEN_WEEK}, 'UTC', ${fans})`);
  for (let first = 1; first <= fans; first += SEED_CHUNK) {
    const last = Math.min(fans, first + SEED_CHUNK - 1);
    await run(sql`
      insert into users (id, display_name)
      select 'bench-fan-' || lpad(i::text, 7, '0'), 'Fan ' || i from generate_series(${first}::int, ${last}::int) i`);
    // The same fans on the live board and on a week that will be frozen, with the rank structure's counts.
    await run(sql`
      with fan as (
        select 'bench-fan-' || lpad(i::text, 7, '0') as user_id, floor(-ln(1 - random()) * 2000)::bigint * 100 as score,
          now() - random() * interval '30 days' as reached_at
        from generate_series(${first}::int, ${last}::int) i),
      entries as (
        insert into leaderboard_entries (board, user_id, score, reached_at)
        select b.board, f.user_id, f.score, f.reached_at from fan f, (values (${LIVE}), (${FROZEN})) as b(board)
        returning board, score)
      insert into leaderboard_counts (board, level, bucket, fans)
      select board, level, (score + ${sql.raw(String(SCORE_OFFSET))}) >> (8 * level), count(*)
      from entries, generate_series(0, 5) as level group by 1, 2, 3
      on conflict (board, level, bucket) do update set fans = leaderboard_counts.fans + excluded.fans`);
  }
  // A final round of a league with every fan in its standings (the round board reads them), in
  // the board's order: each statement ranks the board and keeps a slice.
  await run(sql`insert into teams (id, name, slug) values ('bench-team', 'Bench team', 'bench-team')`);
  await run(sql`
    insert into leagues (id, team_id, name, rules, season, created_by)
    values ('bench-league', 'bench-team', 'Bench league', '{"lineupSize":5,"eligible":{}}', '2026', 'bench')`);
  await run(sql`
    insert into league_rounds (id, league_id, name, season, opens_at, locks_at, ends_at, status, finalized_at, standings_hash, entrants, created_by)
    values (${ROUND}, 'bench-league', 'Bench round', '2026', now() - interval '3 days', now() - interval '2 days',
      now() - interval '1 day', 'final', now(), repeat('0', 64), ${fans}, 'bench')`);
  for (let first = 1; first <= fans; first += SEED_CHUNK)
    await run(sql`
      insert into round_standings (round_id, user_id, position, rank, score, best, submitted_at)
      select ${ROUND}, user_id, position, rank, score, score / 5, now() - interval '2 days'
      from (select user_id, score, rank() over (order by order_key) as rank,
              row_number() over (order by order_key, reached_at, user_id) as position
            from leaderboard_entries where board = ${LIVE}) ranked
      where position between ${first} and ${first + SEED_CHUNK - 1}`);
  await run(sql`analyze`);
  const [distinct] = (
    (await run(
      sql`select count(distinct score)::int as scores from leaderboard_entries where board = ${LIVE}`,
    )) as unknown as {
      rows: { scores: number }[];
    }
  ).rows;
  console.log(
    `seeded ${fans} fans, ${distinct?.scores} distinct scores, a frozen copy, in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

/** Requests from random fans (one token each), for `seconds`. */
async function aroundMe(url: string, path: string, tokens: string[], connections: number): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        path,
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, authorization: `Bearer ${tokens[Math.floor(Math.random() * tokens.length)]}` },
        }),
      },
    ],
  });
  return fromAutocannon(result);
}

const database = await benchDatabase(kind);
try {
  // Seeding a million rows keeps the server too busy to answer the outage watch's pings in time.
  const db = await database.open({ DATABASE_WATCH_TIMEOUT: '10 minutes' });
  await seedCatalog(db, { active: 20, archived: 0 });
  await seedBoard(db);
  await db.close();
  if (values['seed-only']) {
    console.log(`kept: ${JSON.stringify(database.env)}`);
    process.exit(0);
  }
  const server = await startServer(
    {
      ...database.env,
      ...BENCH_SERVER_ENV,
      LOG_LEVEL: 'info',
      CRON_SECRET: BENCH_CRON_SECRET,
      REQUEST_TIMEOUT: '10 minutes',
    },
    3601,
  );
  try {
    // The week of 2020 has long closed: the job freezes it as it would any closed window.
    const frozen = await fetch(`${server.url}/api/cron/freeze-leaderboards`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_CRON_SECRET}` },
    });
    if (frozen.status !== 200) throw new Error(`freeze-leaderboards: ${frozen.status} ${await frozen.text()}`);
    const tokens = Array.from({ length: tokenCount }, () =>
      benchToken({ sub: fanId(1 + Math.floor(Math.random() * fans)) }),
    );
    // Every fan's first request provisions nothing (the users exist); warm the paths.
    const reads = [
      ['my rank + 10 around, live collector board', '/api/leaderboards/collectors/me?around=10'],
      ['my rank + 10 around, frozen week', `/api/leaderboards/collectors/me?around=10&window=week&week=${FROZEN_WEEK}`],
      ['my rank + 10 around, a final round', `/api/leaderboards/rounds/${ROUND}/me?around=10`],
    ] as const;
    for (const [, path] of reads) {
      const check = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${tokens[0]}` } });
      const body = (await check.json()) as { data?: { me?: { rank: number }; above?: unknown[] } };
      if (check.status !== 200 || !body.data?.me)
        throw new Error(`${path}: ${check.status} ${JSON.stringify(body).slice(0, 300)}`);
    }
    const lines: string[] = [];
    // The signed-in baseline: the same tokens on GET /api/user (verify the token, read the user).
    for (const [name, path] of [...reads, ['baseline: GET /api/user', '/api/user'] as const]) {
      await aroundMe(server.url, path, tokens, connectionCounts[0] ?? 1);
      for (const connections of connectionCounts) {
        const result = await aroundMe(server.url, path, tokens, connections);
        lines.push(
          `| ${name} | ${connections} | ${Math.round(result.requestsPerSecond)} | ${result.p50} | ${result.p99} | ${result.non2xx} | ${result.errors} |`,
        );
      }
    }
    console.log(
      `\n${kind} PostgreSQL, ${fans} fans, autocannon, ${seconds} s per line after a warm-up of ${seconds} s per read`,
    );
    console.log('| read | connections | req/s | p50 ms | p99 ms | non-2xx | errors |\n|---|---|---|---|---|---|---|');
    for (const line of lines) console.log(line);

    const tool = defaultLoadTool();
    const loadCpu = tool === 'wrk' ? 0 : undefined;
    if (loadCpu !== undefined) pinToCpu(server.child.pid as number, 1);
    const targets = [
      { name: 'top 100, live board (cached page)', url: `${server.url}/api/leaderboards/collectors?limit=100` },
      { name: 'cached catalog GET /api/packs', url: `${server.url}/api/packs` },
    ];
    for (const target of targets) await load(target.url, { connections: 50, durationSeconds: 2, tool, cpu: loadCpu });
    const results: LoadResult[][] = targets.map(() => []);
    for (let round = 0; round < rounds; round++)
      for (let step = 0; step < targets.length; step++) {
        const index = (round + step) % targets.length;
        results[index]?.push(
          await load((targets[index] as { url: string }).url, {
            connections: 50,
            durationSeconds: seconds,
            tool,
            cpu: loadCpu,
          }),
        );
      }
    const mean = (of: LoadResult[]) => of.reduce((sum, r) => sum + r.requestsPerSecond, 0) / of.length;
    console.log(`\n${tool}, 50 connections, ${rounds} x ${seconds} s each, alternating`);
    console.log('| read | req/s (mean) | rounds | p99 ms (worst) | non-2xx |\n|---|---|---|---|---|');
    targets.forEach((target, index) => {
      const of = results[index] as LoadResult[];
      console.log(
        `| ${target.name} | ${Math.round(mean(of))} | ${of.map((r) => Math.round(r.requestsPerSecond)).join(', ')} | ${Math.max(...of.map((r) => r.p99))} | ${of.reduce((s, r) => s + r.non2xx, 0)} |`,
      );
    });
    const perRound = (results[0] as LoadResult[]).map(
      (r, i) => r.requestsPerSecond / ((results[1] as LoadResult[])[i] as LoadResult).requestsPerSecond,
    );
    console.log(
      `\ntop-100 ÷ cached catalog: **${(mean(results[0] as LoadResult[]) / mean(results[1] as LoadResult[])).toFixed(2)}** (rounds ${perRound.map((r) => r.toFixed(2)).join(', ')})`,
    );
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
}
