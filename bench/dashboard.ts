import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../plugins/app/database/index.js';
import { BENCH_SERVER_ENV, benchDatabase, benchToken, databaseKind, fromAutocannon, startServer } from './lib.js';
import { seedCatalog } from './seed.js';

/**
 * The team dashboard of a team with a year of sales, against the built server:
 *   npm run bench:dashboard -- --db embedded|external [--pulls 1000000] [--teams 10] [--seconds 10] [--connections 1,4,10] [--cache '5 seconds']
 *
 * Seeds straight into a new database (generate_series): a team with 5 packs of 10 collectibles,
 * a year of hourly rollups holding about `--pulls` pulls (packs of 5 cards), the purchase hours of
 * each of 20,000 fans, and the draws per collectible; `--teams` - 1 other teams with the same hours (so the
 * team's rows are read among others'). Then GET /api/admin/teams/{teamId}/dashboard as a viewer of
 * the team, for the whole year in Europe/Paris and for the default 30 days, and the platform's
 * dashboard for the year: autocannon at each of `--connections`, p50 / p99. `--cache` is the
 * server's DASHBOARD_CACHE (its default unless given; `0` measures every read computed afresh).
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    pulls: { type: 'string', default: '1000000' },
    teams: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '1,4,10' },
    cache: { type: 'string' },
  },
});
const kind = databaseKind(values.db);
const pulls = Number(values.pulls);
const teamCount = Number(values.teams);
const seconds = Number(values.seconds);
const connectionCounts = String(values.connections).split(',').map(Number);
const TEAM = 'bench-team-01';
const VIEWER = 'bench-viewer';
const FANS = 20_000;
const CARDS = 5;
const HOURS = 365 * 24;

async function seedRollups(db: DatabaseHandle): Promise<void> {
  const started = performance.now();
  const run = (query: ReturnType<typeof sql>) => db.orm.execute(query);
  const { activeIds, collectibleIds } = await seedCatalog(db, { active: 5, archived: 0 });
  await run(sql`
    insert into teams (id, name, slug)
    select 'bench-team-' || lpad(i::text, 2, '0'), 'Bench team ' || i, 'bench-team-' || i from generate_series(1, ${teamCount}::int) i`);
  await run(sql`update packs set team_id = ${TEAM} where id = any(${sql.param(activeIds)}::text[])`);
  await run(sql`insert into users (id, display_name) values (${VIEWER}, 'Bench viewer')`);
  await run(
    sql`insert into team_admins (team_id, user_id, role, added_by) values (${TEAM}, ${VIEWER}, 'viewer', 'bench')`,
  );
  // Packs opened per (team, hour, pack): uniform on 0..2m, mean m, so the team's year holds about `pulls` pulls.
  const meanOpened = pulls / CARDS / HOURS / activeIds.length;
  const packsOf = (team: string) =>
    team === TEAM ? sql`${sql.param(activeIds)}::text[]` : sql`array['p1', 'p2', 'p3', 'p4', 'p5']`;
  for (let n = 1; n <= teamCount; n++) {
    const team = `bench-team-${String(n).padStart(2, '0')}`;
    await run(sql`
      insert into dashboard_hours (team_id, hour, pack_id, packs_sold, coins_taken, packs_opened,
        pulls_common, pulls_uncommon, pulls_rare, pulls_epic, pulls_legendary)
      select ${team}, o.hour, o.pack_id, o.opened, o.opened * 100, o.opened,
             o.opened * 2, o.opened, o.opened, (o.opened * 0.7)::int, o.opened * 5 - o.opened * 4 - (o.opened * 0.7)::int
      from (
        select h.hour, p.pack_id, floor(random() * (2 * ${meanOpened}::float8 + 1))::int as opened
        from generate_series(date_trunc('hour', now()) - interval '365 days', date_trunc('hour', now()) - interval '1 hour', interval '1 hour') h(hour)
        cross join unnest(${packsOf(team)}) p(pack_id)) o`);
    await run(sql`
      insert into dashboard_hours (team_id, hour, pack_id, quest_completions, grants, league_entries)
      select ${team}, h.hour, '', (random() * 3)::int, (random() * 3)::int, case when extract(hour from h.hour) = 20 then 500 else 0 end
      from generate_series(date_trunc('hour', now()) - interval '365 days', date_trunc('hour', now()) - interval '1 hour', interval '1 hour') h(hour)`);
    await run(sql`
      insert into dashboard_hours (team_id, hour, pack_id, packs_sold, coins_taken, packs_opened, pulls_common,
        pulls_uncommon, pulls_rare, pulls_epic, pulls_legendary, quest_completions, grants, league_entries)
      select team_id, hour, '*', sum(packs_sold), sum(coins_taken), sum(packs_opened), sum(pulls_common),
        sum(pulls_uncommon), sum(pulls_rare), sum(pulls_epic), sum(pulls_legendary), sum(quest_completions), sum(grants), sum(league_entries)
      from dashboard_hours where team_id = ${team} group by team_id, hour`);
    // The buyers of each hour (as many as the hour's packs sold, out of FANS fans), kept per fan.
    await run(sql`
      insert into dashboard_fan_hours (team_id, user_id, hours)
      select team_id, user_id, array_agg(hour order by hour) from (
        select distinct d.team_id, d.hour, 'bench-fan-' || (1 + floor(random() * ${FANS}))::int as user_id
        from (select team_id, hour, packs_sold::int as sold from dashboard_hours where team_id = ${team} and pack_id = '*') d
        cross join lateral generate_series(1, d.sold) s(i)) b
      group by team_id, user_id`);
  }
  const [opened] = (
    (await run(
      sql`select sum(packs_opened)::int as opened, sum(pulls_common + pulls_uncommon + pulls_rare + pulls_epic + pulls_legendary)::int as pulls
          from dashboard_hours where team_id = ${TEAM} and pack_id = '*'`,
    )) as unknown as { rows: { opened: number; pulls: number }[] }
  ).rows;
  // Every pull of the team's packs, per collectible, in proportion to the pool (1000 / (i + 1) copies).
  const shares = collectibleIds.map((_, i) => Math.floor(1000 / (i + 1)));
  const total = shares.reduce((sum, share) => sum + share, 0);
  const perPack = (opened?.pulls ?? 0) / activeIds.length;
  await run(sql`
    insert into dashboard_pack_draws (pack_id, collectible_id, team_id, draws)
    select p.pack_id, c.collectible_id, ${TEAM}, round(${perPack}::float8 * c.share / ${total}::float8)
    from unnest(${sql.param(activeIds)}::text[]) p(pack_id),
         unnest(${sql.param(collectibleIds)}::text[], ${sql.param(shares)}::int[]) c(collectible_id, share)`);
  // As autovacuum would leave them.
  await run(sql`vacuum analyze dashboard_hours, dashboard_fan_hours, dashboard_pack_draws`);
  await run(sql`analyze`);
  const [counts] = (
    (await run(
      sql`select (select count(*)::int from dashboard_hours) as hours, (select coalesce(sum(cardinality(hours)), 0)::int from dashboard_fan_hours) as buyers`,
    )) as unknown as { rows: { hours: number; buyers: number }[] }
  ).rows;
  console.log(
    `seeded ${teamCount} teams: ${TEAM} has ${opened?.pulls} pulls (${opened?.opened} packs opened) over a year; ` +
      `${counts?.hours} hour rows, ${counts?.buyers} buyer-hours, in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

async function measure(url: string, path: string, token: string, connections: number) {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [{ method: 'GET', path, headers: { authorization: `Bearer ${token}` } }],
  });
  return fromAutocannon(result);
}

const database = await benchDatabase(kind);
try {
  const db = await database.open({ DATABASE_WATCH_TIMEOUT: '10 minutes' });
  await seedRollups(db);
  await db.close();
  const server = await startServer(
    {
      ...database.env,
      ...BENCH_SERVER_ENV,
      REQUEST_TIMEOUT: '10 minutes',
      ...(values.cache === undefined ? {} : { DASHBOARD_CACHE: values.cache }),
    },
    3602,
  );
  try {
    const viewer = benchToken({ sub: VIEWER });
    const admin = benchToken({ sub: 'bench-admin', role: 'admin' });
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const year = `from=${day(-365)}&to=${day(1)}&timeZone=Europe/Paris`;
    const reads = [
      ['team dashboard, a year, Europe/Paris', `/api/admin/teams/${TEAM}/dashboard?${year}`, viewer],
      ['team dashboard, default 30 days, UTC', `/api/admin/teams/${TEAM}/dashboard`, viewer],
      ['platform dashboard, a year, Europe/Paris', `/api/admin/dashboard?${year}`, admin],
    ] as const;
    for (const [name, path, token] of reads) {
      const check = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await check.json()) as { data?: { totals?: object; series?: unknown[] } };
      if (check.status !== 200 || !body.data?.totals)
        throw new Error(`${name}: ${check.status} ${JSON.stringify(body).slice(0, 300)}`);
      console.log(`${name}: ${body.data.series?.length} days, totals ${JSON.stringify(body.data.totals)}`);
    }
    const lines: string[] = [];
    for (const [name, path, token] of reads) {
      await measure(server.url, path, token, connectionCounts[0] ?? 1);
      for (const connections of connectionCounts) {
        const result = await measure(server.url, path, token, connections);
        lines.push(
          `| ${name} | ${connections} | ${Math.round(result.requestsPerSecond)} | ${result.p50} | ${result.p99} | ${result.non2xx} | ${result.errors} |`,
        );
      }
    }
    console.log(
      `\n${kind} PostgreSQL, ${pulls} pulls, DASHBOARD_CACHE ${values.cache ?? 'default'}, autocannon, ${seconds} s per line after a warm-up`,
    );
    console.log('| read | connections | req/s | p50 ms | p99 ms | non-2xx | errors |\n|---|---|---|---|---|---|---|');
    for (const line of lines) console.log(line);
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
}
