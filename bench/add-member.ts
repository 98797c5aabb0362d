import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { teamAdmins, teams, users } from '../db/schema.js';
import { BENCH_SERVER_ENV, benchDatabase, benchToken, databaseKind, median, percentile, startServer } from './lib.js';

/**
 * The [spec] add-member endpoint: `--count` sequential
 * POST /api/admin/teams/{teamId}/members calls by the team's owner, each adding a new user
 * (201, one transaction with the team's row lock and an audit row), then the same calls again
 * (200, already a member):
 *   npm run bench:members -- --db embedded|external [--count 1000]
 */

const { values } = parseArgs({
  options: { db: { type: 'string', default: 'embedded' }, count: { type: 'string', default: '1000' } },
});
const kind = databaseKind(values.db);
const count = Number(values.count);
const ownerToken = benchToken({ sub: 'bench-owner' });

const database = await benchDatabase(kind);
try {
  const db = await database.open();
  const teamId = randomUUID();
  const now = new Date();
  const memberIds = Array.from({ length: count }, (_, i) => `bench-member-${i}`);
  await db.orm
    .insert(users)
    .values([{ id: 'bench-owner', displayName: 'Owner' }, ...memberIds.map((id) => ({ id, displayName: id }))]);
  await db.orm.insert(teams).values({ id: teamId, name: 'Bench FC', slug: 'bench-fc', createdAt: now });
  await db.orm
    .insert(teamAdmins)
    .values({ teamId, userId: 'bench-owner', role: 'owner', addedBy: 'bench', createdAt: now });
  await db.close();

  const server = await startServer({ ...database.env, ...BENCH_SERVER_ENV }, 3521);
  try {
    const add = async (userId: string, expected: number) => {
      const started = performance.now();
      const res = await fetch(`${server.url}/api/admin/teams/${teamId}/members`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId, role: 'viewer' }),
      });
      await res.arrayBuffer();
      if (res.status !== expected) throw new Error(`adding ${userId} answered ${res.status}`);
      return performance.now() - started;
    };
    const added: number[] = [];
    for (const id of memberIds) added.push(await add(id, 201));
    const repeated: number[] = [];
    for (const id of memberIds) repeated.push(await add(id, 200));
    console.log(
      `POST /api/admin/teams/{teamId}/members on ${kind}, ${count} calls each, sequential, Node ${process.version}\n`,
    );
    console.log('| calls | n | median ms | p99 ms | max ms |');
    console.log('|---|---|---|---|---|');
    for (const [name, list] of [
      ['201 added', added],
      ['200 already a member', repeated],
    ] as const) {
      console.log(
        `| ${name} | ${list.length} | ${median(list).toFixed(2)} | ${percentile(list, 99).toFixed(2)} | ${Math.max(...list).toFixed(2)} |`,
      );
    }
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
}
