import { sql } from 'drizzle-orm';
import t from 'tap';
import { subjectProblem } from '../../../plugins/app/auth/rules.js';
import { bearer, buildTestApp, suiteServer, tokenFor } from '../../support/app.js';

/**
 * Identity: a token's subject is the user id, exactly. Found by fuzzing: a subject of U+FEFF +
 * an admin's id was read back without its BOM and answered as the admin. Subjects that cannot
 * read the same everywhere are refused, text round-trips exactly, and a user row read back must
 * carry the subject asked for.
 */

t.comment(`database: ${suiteServer}`);

const ADMIN_ID = 'admin-id';

/** A string as ASCII for a test name: U+2028 or U+0085 in TAP output would break its lines. */
const show = (value: string) =>
  JSON.stringify(value).replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

t.test('a subject with a BOM, a lone surrogate or an invisible character is a 401, never another user', async (t) => {
  const app = await buildTestApp(t, { ADMIN_USER_IDS: ADMIN_ID });
  const admin = await app.inject({ url: '/api/user', headers: bearer(tokenFor(ADMIN_ID)) });
  t.equal(admin.json().data.isAdmin, true, 'the real admin');

  const hostile = [
    `\ufeff${ADMIN_ID}`,
    `${ADMIN_ID}\ufeff`,
    'a\ud800é\udc00b',
    'a\ud800é\udc00é',
    '\udfff',
    `${ADMIN_ID}\u200b`,
    `\u202e${ADMIN_ID}`,
    `${ADMIN_ID}\u2028`,
    `${ADMIN_ID}\u0085`,
    `${ADMIN_ID}\u0007`,
    ` ${ADMIN_ID}`,
    `${ADMIN_ID} `,
    '\ue000private',
  ];
  for (const sub of hostile) {
    const res = await app.inject({ url: '/api/user', headers: bearer(tokenFor(sub)) });
    t.equal(res.statusCode, 401, `${show(sub)}: 401`);
    t.same(
      res.json().error,
      { code: 'invalid_token', message: 'The token is not valid.', requestId: res.headers['x-request-id'] },
      'and nothing says which check failed',
    );
    const write = await app.inject({
      method: 'POST',
      url: '/api/admin/collectibles',
      headers: bearer(tokenFor(sub)),
      payload: { name: 'Stolen' },
    });
    t.equal(write.statusCode, 401, `${show(sub)}: an admin write is 401`);
  }
  t.equal(await app.users.findById(`\ufeff${ADMIN_ID}`), undefined, 'no row was provisioned for the BOM subject');

  for (const sub of ['alice', 'Zoë Ñandú', 'auth0|5f7c8ec7c33c6c004bbafe82', '用户-42', 'emoji 😀 user', 'a b']) {
    const res = await app.inject({ url: '/api/user', headers: bearer(tokenFor(sub)) });
    t.equal(res.statusCode, 200, `${show(sub)} is a subject`);
    t.equal(res.json().data.id, sub, 'answered as exactly that subject');
    t.equal(res.json().data.isAdmin, false);
  }
});

t.test('subjectProblem', async (t) => {
  t.equal(subjectProblem('alice'), undefined);
  t.equal(subjectProblem('x'.repeat(128)), undefined, '128 characters');
  t.match(subjectProblem('x'.repeat(129)), /longer than 128/);
  t.match(subjectProblem(''), /missing/);
  t.match(subjectProblem(42), /not a string/);
  t.match(subjectProblem('a\ud800'), /lone surrogate/);
  t.match(subjectProblem('\ufeffa'), /invisible/);
  t.match(subjectProblem(' a'), /white space/);
});

t.test('text with a BOM or astral characters is stored and read back exactly', async (t) => {
  const app = await buildTestApp(t);
  const token = tokenFor('dora');
  // Display names are trimmed (JavaScript counts U+FEFF as white space), so BOMs go inside.
  for (const displayName of ['Do\ufeffra', 'Dora 😀', 'a\ud83d\ude00é', 'Zoë\u0301']) {
    const patched = await app.inject({
      method: 'PATCH',
      url: '/api/user',
      headers: bearer(token),
      payload: { displayName },
    });
    t.equal(patched.statusCode, 200);
    t.equal(patched.json().data.displayName, displayName, `${show(displayName)} answered as sent`);
    const read = await app.inject({ url: '/api/user', headers: bearer(token) });
    t.equal(read.json().data.displayName, displayName, 'and read back from the database as sent');
  }
  const admin = tokenFor('root', { role: 'admin' });
  const description = '\ufeffleading BOM, 😀, and a trailing BOM\ufeff';
  const created = await app.inject({
    method: 'POST',
    url: '/api/admin/collectibles',
    headers: bearer(admin),
    payload: { name: 'Card', description },
  });
  const read = await app.inject({ url: `/api/admin/collectibles/${created.json().data.id}`, headers: bearer(admin) });
  t.equal(read.json().data.description, description, 'a description keeps its BOMs, as PostgreSQL stores them');
});

t.test(
  'a user row read back with another id than the subject is refused (identity never rests on a round trip)',
  async (t) => {
    const app = await buildTestApp(t, { ADMIN_USER_IDS: ADMIN_ID, LOG_LEVEL: 'silent' });
    // A database that changes ids on the way in, as PGlite's decoder did on the way out.
    await app.db.orm.execute(
      sql.raw(`
    create function lowercase_user_id() returns trigger language plpgsql as $$
    begin new.id := lower(new.id); return new; end $$;
    create trigger lowercase_user_id before insert on users for each row execute function lowercase_user_id();
  `),
    );
    const res = await app.inject({ url: '/api/user', headers: bearer(tokenFor('ADMIN-ID')) });
    t.equal(res.statusCode, 500, 'refused');
    t.equal(res.json().error.code, 'internal_error');
    t.notMatch(res.body, /isAdmin/, 'never answered as the admin');
    const again = await app.inject({
      method: 'POST',
      url: '/api/admin/collectibles',
      headers: bearer(tokenFor('ADMIN-ID')),
      payload: { name: 'x' },
    });
    t.not(again.statusCode, 201, 'and no admin write goes through');
  },
);
