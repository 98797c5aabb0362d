import { desc, eq, sql } from 'drizzle-orm';
import t from 'tap';
import { jobLeases, jobRuns } from '../../../../db/schema.js';
import { CRON_JOBS } from '../../../../schemas/enums.js';
import { buildTestApp, createTestDatabase } from '../../../support/app.js';

/** Named jobs: run by the scheduler's call, one run at a time across instances, every run recorded. */

const SECRET = 'cron-secret-for-the-job-tests';

t.test('POST /api/cron/{job}', async (t) => {
  const database = await createTestDatabase();
  const a = await buildTestApp(t, { CRON_SECRET: SECRET, CRON_INTERNAL: 'false', DATABASE_URL: database.url });
  const b = await buildTestApp(t, { CRON_SECRET: SECRET, CRON_INTERNAL: 'false', DATABASE_URL: database.url });
  t.teardown(() => database.drop());
  const run = (app: typeof a, job: string, secret = SECRET) =>
    app.inject({ method: 'POST', url: `/api/cron/${job}`, headers: { authorization: `Bearer ${secret}` } });

  t.test('a run answers what it did and is recorded', async (t) => {
    const res = await run(a, 'expire-purchases');
    t.equal(res.statusCode, 200);
    t.same(res.json().data, { job: 'expire-purchases', processed: 0, expired: 0 });
    const [recorded] = await a.db.orm.select().from(jobRuns).orderBy(desc(jobRuns.startedAt)).limit(1);
    t.match(recorded, { job: 'expire-purchases', trigger: 'request', outcome: 'ok', processed: 0, error: null });
    t.ok(recorded?.finishedAt);
    t.same(await a.db.orm.select().from(jobLeases), [], 'the lease is given back');
  });

  t.test('every job runs and is recorded (its name is one the runs table accepts)', async (t) => {
    for (const job of CRON_JOBS) {
      const res = await run(a, job);
      t.equal(res.statusCode, 200, `${job}: ${res.body}`);
      const [recorded] = await a.db.orm
        .select()
        .from(jobRuns)
        .where(eq(jobRuns.job, job))
        .orderBy(desc(jobRuns.startedAt))
        .limit(1);
      t.match(recorded, { job, outcome: 'ok' }, job);
    }
  });

  t.test('while a run holds the lease, on any instance, another is refused', async (t) => {
    await a.db.orm
      .insert(jobLeases)
      .values({ job: 'expire-purchases', runId: 'held-elsewhere', expiresAt: sql`now() + interval '1 minute'` });
    for (const app of [a, b]) {
      const res = await run(app, 'expire-purchases');
      t.equal(res.statusCode, 409);
      t.equal(res.json().error.code, 'job_running');
    }
    const [lease] = await a.db.orm.select().from(jobLeases);
    t.equal(lease?.runId, 'held-elsewhere', "a refused run does not touch the holder's lease");
  });

  t.test('a holder that died frees the job when its lease expires', async (t) => {
    await a.db.orm
      .update(jobLeases)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(jobLeases.job, 'expire-purchases'));
    t.equal((await run(b, 'expire-purchases')).statusCode, 200);
    t.same(await a.db.orm.select().from(jobLeases), []);
  });

  t.test('runs at once on two instances: each answered, never two at the same time', async (t) => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) => run(index % 2 ? a : b, 'expire-purchases')),
    );
    const statuses = answers.map((res) => res.statusCode);
    t.ok(
      statuses.every((status) => status === 200 || status === 409),
      `200 or 409: ${statuses.join(',')}`,
    );
    t.ok(statuses.includes(200), 'at least one ran');
    const runs = await a.db.orm.select().from(jobRuns).where(eq(jobRuns.trigger, 'request')).orderBy(jobRuns.startedAt);
    const finished = runs.filter((row) => row.finishedAt);
    t.equal(finished.length, runs.length, 'every run that started finished');
    for (let i = 1; i < finished.length; i++) {
      const previous = finished[i - 1];
      const current = finished[i];
      if (previous?.finishedAt && current) t.ok(current.startedAt >= previous.finishedAt, 'no two runs overlapped');
    }
  });

  t.test('names that are no job, and callers without the secret', async (t) => {
    const unknown = await run(a, 'drop-tables');
    t.equal(unknown.statusCode, 404);
    t.equal(unknown.json().error.code, 'job_not_found');
    t.equal((await run(a, 'expire-purchases', 'not-the-secret-at-all')).statusCode, 401);
    t.equal(
      (await run(a, 'drop-tables', 'not-the-secret-at-all')).statusCode,
      401,
      'the secret is checked before the name',
    );
  });
});
