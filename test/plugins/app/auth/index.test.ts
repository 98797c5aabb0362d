import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import t from 'tap';
import { users } from '../../../../db/schema.js';
import {
  claimMatches,
  cleanDisplayName,
  displayNameFromClaims,
  isPlatformAdmin,
  MAX_DISPLAY_NAME_LENGTH,
  readClaim,
} from '../../../../plugins/app/auth/rules.js';
import type { App } from '../../../../app.js';
import { buildTestApp, bearer, tokenFor } from '../../../support/app.js';

/**
 * Who is calling: just-in-time provisioning,
 * platform-admin resolution, the admin-only route, and PATCH /api/user, through the real app.
 */

/** A subtest's `t` (the last overload of t.test takes only the callback). */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

interface ErrorBody {
  success: false;
  error: { code: string; message: string; requestId?: string; details?: Array<{ path: string; message: string }> };
}
interface CurrentUserBody {
  success: true;
  data: { id: string; displayName: string; isAdmin: boolean; teams: unknown[]; createdAt: string };
}
interface AdminUserBody {
  success: true;
  data: { id: string; displayName: string; role: 'user' | 'admin'; createdAt: string; lastSeenAt: string };
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const getMe = (app: App, token?: string) =>
  app.inject({ method: 'GET', url: '/api/user', headers: token ? bearer(token) : {} });
const patchMe = (app: App, token: string | undefined, payload: unknown) =>
  app.inject({ method: 'PATCH', url: '/api/user', headers: token ? bearer(token) : {}, payload: payload as object });
const getAdminUser = (app: App, userId: string, token?: string) =>
  app.inject({
    method: 'GET',
    url: `/api/admin/users/${encodeURIComponent(userId)}`,
    headers: token ? bearer(token) : {},
  });

async function rowsFor(app: App, id: string) {
  return app.db.orm.select().from(users).where(eq(users.id, id));
}
async function userCount(app: App): Promise<number> {
  return (await app.db.orm.select({ id: users.id }).from(users)).length;
}

function expectError(t: Test, res: LightMyRequestResponse, status: number, code: string): ErrorBody {
  t.equal(res.statusCode, status, `status ${status} (got ${res.statusCode})`);
  const body = res.json<ErrorBody>();
  t.equal(body.success, false);
  t.equal(body.error?.code, code, `code ${code}`);
  t.equal(body.error?.requestId, res.headers['x-request-id'], 'requestId is the x-request-id');
  return body;
}

async function isAdminFor(app: App, sub: string, claims: Record<string, unknown> = {}): Promise<boolean> {
  const res = await getMe(app, tokenFor(sub, claims));
  if (res.statusCode !== 200) throw new Error(`GET /api/user answered ${res.statusCode}: ${res.body}`);
  return res.json<CurrentUserBody>().data.isAdmin;
}

// ---------------------------------------------------------------------------------------------
// Default configuration (AUTH_ADMIN_CLAIM=role=admin, no ADMIN_USER_IDS): one app for the group
// ---------------------------------------------------------------------------------------------

t.test('with the default test configuration', async (t) => {
  const app = await buildTestApp(t);

  t.test('GET /api/user provisions the caller just in time', async (t) => {
    t.test('first call creates the row and answers the current user', async (t) => {
      t.equal(await app.users.findById('jit-alice'), undefined, 'no row before');
      const before = Date.now();
      const res = await getMe(app, tokenFor('jit-alice', { name: 'Alice Liddell', preferred_username: 'alice' }));
      t.equal(res.statusCode, 200);
      const body = res.json<CurrentUserBody>();
      const row = await app.users.findById('jit-alice');
      t.ok(row, 'row created');
      t.same(body, {
        success: true,
        data: {
          id: 'jit-alice',
          displayName: 'Alice Liddell',
          isAdmin: false,
          teams: [],
          createdAt: row?.createdAt.toISOString(),
        },
      });
      t.match(body.data.createdAt, ISO);
      t.ok(Math.abs(Date.parse(body.data.createdAt) - before) < 60_000, 'createdAt is now');
      t.equal(row?.displayName, 'Alice Liddell');
      t.equal(row?.role, 'user');
    });

    t.test('a second call does not create a second row and keeps the first row', async (t) => {
      const countBefore = await userCount(app);
      const [first] = await rowsFor(app, 'jit-alice');
      const res = await getMe(app, tokenFor('jit-alice', { name: 'Alice Liddell' }));
      t.equal(res.statusCode, 200);
      t.equal(res.json<CurrentUserBody>().data.createdAt, first?.createdAt.toISOString(), 'same createdAt');
      t.equal((await rowsFor(app, 'jit-alice')).length, 1);
      t.equal(await userCount(app), countBefore, 'no new row anywhere');
    });

    t.test('displayName falls back to preferred_username, then nickname, then email, then the sub', async (t) => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['jit-pref', { preferred_username: 'prefy' }, 'prefy'],
        ['jit-pref-blank-name', { name: '   ', preferred_username: 'prefy2' }, 'prefy2'],
        ['jit-pref-numeric-name', { name: 42, preferred_username: 'prefy3' }, 'prefy3'],
        ['jit-nick', { nickname: 'nicky' }, 'nicky'],
        ['jit-email', { email: 'e@example.com' }, 'e@example.com'],
        ['jit-sub-only', {}, 'jit-sub-only'],
        ['jit-trimmed', { name: '  Padded Name  ' }, 'Padded Name'],
      ];
      for (const [sub, claims, expected] of cases) {
        const res = await getMe(app, tokenFor(sub, claims));
        t.equal(res.statusCode, 200, sub);
        t.equal(res.json<CurrentUserBody>().data.displayName, expected, `${sub} answers ${expected}`);
        t.equal((await app.users.findById(sub))?.displayName, expected, `${sub} stores ${expected}`);
      }
    });

    t.test('a later token with another name does not rename a provisioned user', async (t) => {
      await getMe(app, tokenFor('jit-renamed', { name: 'First Name' }));
      const res = await getMe(app, tokenFor('jit-renamed', { name: 'Second Name' }));
      t.equal(res.json<CurrentUserBody>().data.displayName, 'First Name');
    });

    t.test('two concurrent first calls for one new subject both answer 200 with one row', async (t) => {
      const token = tokenFor('jit-race', { name: 'Racer' });
      const responses = await Promise.all([getMe(app, token), getMe(app, token), getMe(app, token)]);
      t.same(
        responses.map((res) => res.statusCode),
        [200, 200, 200],
      );
      const bodies = responses.map((res) => res.json<CurrentUserBody>().data);
      t.same(new Set(bodies.map((data) => data.createdAt)).size, 1, 'all see the same row');
      t.ok(bodies.every((data) => data.id === 'jit-race' && data.displayName === 'Racer'));
      t.equal((await rowsFor(app, 'jit-race')).length, 1);
    });

    t.test('a display-name claim with a NUL character is provisioned with the NUL removed', async (t) => {
      // Some identity providers let users choose their own name; PostgreSQL text cannot hold NUL.
      const res = await getMe(app, tokenFor('jit-nul-name', { name: 'Mal\u0000lory\u0000' }));
      t.equal(res.statusCode, 200, `status 200 (got ${res.statusCode})`);
      t.equal(res.json<CurrentUserBody>().data.displayName, 'Mallory', 'answered without the NUL');
      const row = await app.users.findById('jit-nul-name');
      t.equal(row?.displayName, 'Mallory', 'stored without the NUL');
      const again = await getMe(app, tokenFor('jit-nul-name', { name: 'Mal\u0000lory\u0000' }));
      t.equal(again.statusCode, 200, 'and on every later request');
    });

    t.test('display-name claims are cleaned: control characters removed, trimmed, 100 code points', async (t) => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['jit-ctl-name', { name: '\tAl\u0007ice\r\n\u007f' }, 'Alice'],
        ['jit-ctl-only-name', { name: '\u0000\u0001\u001f', preferred_username: 'pref\u0000erred' }, 'preferred'],
        ['jit-ctl-blank-pref', { name: '\u0000', preferred_username: ' \u0000 ', nickname: 'nick' }, 'nick'],
        [
          'jit-ctl-all-blank',
          { name: '\u0000', preferred_username: '\t', nickname: '\n', email: '\u007f' },
          'jit-ctl-all-blank',
        ],
        ['jit-long-name', { name: 'L'.repeat(150) }, 'L'.repeat(100)],
        ['jit-emoji-name', { name: `${'e'.repeat(99)}😀😀` }, `${'e'.repeat(99)}😀`],
      ];
      for (const [sub, claims, expected] of cases) {
        const res = await getMe(app, tokenFor(sub, claims));
        t.equal(res.statusCode, 200, `${sub}: status 200 (got ${res.statusCode})`);
        t.equal(
          res.json<CurrentUserBody>().data.displayName,
          expected,
          `${sub} answers ${JSON.stringify(expected.slice(0, 20))}…`,
        );
        t.equal((await app.users.findById(sub))?.displayName, expected, `${sub} stores the same`);
      }
    });
  });

  t.test('platform admin by role', async (t) => {
    t.test('a plain user is not admin', async (t) => {
      t.equal(await isAdminFor(app, 'role-plain'), false);
      t.equal(await isAdminFor(app, 'role-plain', { role: 'user' }), false);
    });
    t.test('the admin claim role=admin makes the caller admin for that token only', async (t) => {
      t.equal(await isAdminFor(app, 'role-claim', { role: 'admin' }), true);
      t.equal(await isAdminFor(app, 'role-claim'), false, 'a later token without the claim is not admin');
      t.equal((await app.users.findById('role-claim'))?.role, 'user', 'the claim is not stored as a role');
    });
    t.test('claim values are matched exactly', async (t) => {
      t.equal(await isAdminFor(app, 'role-case', { role: 'Admin' }), false);
      t.equal(await isAdminFor(app, 'role-case', { role: 'admin ' }), false);
      t.equal(await isAdminFor(app, 'role-case', { role: 'administrator' }), false);
      t.equal(await isAdminFor(app, 'role-case', { roles: 'admin' }), false, 'another claim name');
      t.equal(await isAdminFor(app, 'role-case', { role: ['user', 'admin'] }), true, 'an array containing it');
    });
    t.test('a users row with role admin makes the caller admin', async (t) => {
      t.equal(await isAdminFor(app, 'role-row'), false, 'not admin while role is user');
      await app.db.orm.update(users).set({ role: 'admin' }).where(eq(users.id, 'role-row'));
      t.equal(await isAdminFor(app, 'role-row'), true, 'admin once the row says so');
      await app.db.orm.update(users).set({ role: 'user' }).where(eq(users.id, 'role-row'));
      t.equal(await isAdminFor(app, 'role-row'), false, 'not admin once demoted');
    });
  });

  t.test('GET /api/admin/users/:userId', async (t) => {
    const adminToken = tokenFor('adm-root', { role: 'admin', name: 'Root' });
    const userToken = tokenFor('adm-user', { name: 'Plain User' });
    // Provision the target.
    t.equal((await getMe(app, tokenFor('adm-target', { name: 'Target Person' }))).statusCode, 200);

    t.test('401 without a token', async (t) => {
      const res = await getAdminUser(app, 'adm-target');
      expectError(t, res, 401, 'missing_credentials');
      t.equal(res.headers['www-authenticate'], 'Bearer realm="api"');
    });
    t.test('401 with a forged token, and the forged subject is not provisioned', async (t) => {
      const res = await getAdminUser(app, 'adm-target', tokenFor('adm-forged', { role: 'admin' }, 'not-the-secret'));
      expectError(t, res, 401, 'invalid_token');
      t.match(String(res.headers['www-authenticate']), /^Bearer /);
      t.equal(await app.users.findById('adm-forged'), undefined);
    });
    t.test('403 forbidden for a signed-in non-admin', async (t) => {
      const res = await getAdminUser(app, 'adm-target', userToken);
      const body = expectError(t, res, 403, 'forbidden');
      t.notOk(body.error.message.includes('Target'), 'nothing about the target leaks');
      t.ok(await app.users.findById('adm-user'), 'the non-admin caller was still provisioned');
    });
    t.test('403 for a non-admin asking about an unknown user (no existence oracle)', async (t) => {
      expectError(t, await getAdminUser(app, 'adm-nobody', userToken), 403, 'forbidden');
    });
    t.test('200 for an admin, with exactly the admin view', async (t) => {
      const res = await getAdminUser(app, 'adm-target', adminToken);
      t.equal(res.statusCode, 200);
      const body = res.json<AdminUserBody>();
      const row = await app.users.findById('adm-target');
      t.same(body, {
        success: true,
        data: {
          id: 'adm-target',
          displayName: 'Target Person',
          role: 'user',
          createdAt: row?.createdAt.toISOString(),
          lastSeenAt: row?.lastSeenAt.toISOString(),
        },
      });
      t.match(body.data.createdAt, ISO);
      t.match(body.data.lastSeenAt, ISO);
    });
    t.test('an admin can see itself, with role user when admin only by claim', async (t) => {
      const res = await getAdminUser(app, 'adm-root', adminToken);
      t.equal(res.statusCode, 200);
      t.equal(res.json<AdminUserBody>().data.role, 'user');
      t.equal(res.json<AdminUserBody>().data.displayName, 'Root');
    });
    t.test('404 user_not_found for an unknown id', async (t) => {
      expectError(t, await getAdminUser(app, 'adm-never-seen', adminToken), 404, 'user_not_found');
    });
    t.test('an id of 128 characters is valid (404), 129 is 400 validation_failed', async (t) => {
      expectError(t, await getAdminUser(app, 'a'.repeat(128), adminToken), 404, 'user_not_found');
      const body = expectError(t, await getAdminUser(app, 'a'.repeat(129), adminToken), 400, 'validation_failed');
      t.same(
        body.error.details?.map((detail) => detail.path),
        ['/params/userId'],
      );
      expectError(t, await getAdminUser(app, 'b'.repeat(200), adminToken), 400, 'validation_failed');
    });
    t.test('authentication comes before validation: an over-long id without a token is 401, not 400', async (t) => {
      expectError(t, await getAdminUser(app, 'a'.repeat(129)), 401, 'missing_credentials');
      expectError(t, await getAdminUser(app, 'a'.repeat(129), userToken), 403, 'forbidden');
    });
    t.test(
      'an id containing a NUL character (/%00abc) is 400 validation_failed for an admin, not 404 or 500',
      async (t) => {
        const res = await app.inject({ method: 'GET', url: '/api/admin/users/%00abc', headers: bearer(adminToken) });
        const body = expectError(t, res, 400, 'validation_failed');
        t.same(body.error.details, [{ path: '/params/userId', message: 'must not contain NUL characters' }]);
        t.notOk(res.body.includes('\u0000'), 'the NUL is not echoed');
        const inside = expectError(t, await getAdminUser(app, 'adm\u0000target', adminToken), 400, 'validation_failed');
        t.same(
          inside.error.details?.map((detail) => detail.path),
          ['/params/userId'],
          'a NUL inside an id too',
        );
      },
    );
    t.test('a NUL id is still 401 without a token and 403 for a non-admin (authentication first)', async (t) => {
      expectError(t, await getAdminUser(app, '\u0000abc'), 401, 'missing_credentials');
      expectError(t, await getAdminUser(app, '\u0000abc', userToken), 403, 'forbidden');
    });
  });

  t.test('PATCH /api/user', async (t) => {
    const token = tokenFor('patch-alice', { name: 'Alice From Token' });

    t.test('401 without a token, even with an invalid body', async (t) => {
      expectError(t, await patchMe(app, undefined, { displayName: 'x' }), 401, 'missing_credentials');
      expectError(t, await patchMe(app, undefined, { displayName: 5, extra: true }), 401, 'missing_credentials');
    });

    t.test('changes the display name and stores it', async (t) => {
      const res = await patchMe(app, token, { displayName: 'Alice Liddell' });
      t.equal(res.statusCode, 200);
      const body = res.json<CurrentUserBody>();
      const row = await app.users.findById('patch-alice');
      t.same(body, {
        success: true,
        data: {
          id: 'patch-alice',
          displayName: 'Alice Liddell',
          isAdmin: false,
          teams: [],
          createdAt: row?.createdAt.toISOString(),
        },
      });
      t.equal(row?.displayName, 'Alice Liddell');
    });

    t.test('later tokens carrying another name keep the chosen name', async (t) => {
      const res = await getMe(app, tokenFor('patch-alice', { name: 'Somebody Else' }));
      t.equal(res.json<CurrentUserBody>().data.displayName, 'Alice Liddell');
      t.equal((await app.users.findById('patch-alice'))?.displayName, 'Alice Liddell');
    });

    t.test('surrounding whitespace is trimmed', async (t) => {
      const res = await patchMe(app, token, { displayName: '  Alice L.  ' });
      t.equal(res.statusCode, 200);
      t.equal(res.json<CurrentUserBody>().data.displayName, 'Alice L.');
      t.equal((await app.users.findById('patch-alice'))?.displayName, 'Alice L.');
    });

    t.test('invalid bodies are 400 validation_failed and change nothing', async (t) => {
      const cases: Array<[string, unknown, string[]]> = [
        ['an unknown field', { displayName: 'Valid Name', extra: 1 }, ['/extra']],
        ['a number (no coercion)', { displayName: 5 }, ['/displayName']],
        ['a boolean', { displayName: true }, ['/displayName']],
        ['null', { displayName: null }, ['/displayName']],
        ['an empty string', { displayName: '' }, ['/displayName']],
        ['whitespace only', { displayName: '   ' }, ['/displayName']],
        ['tabs and newlines only', { displayName: '\t\n' }, ['/displayName']],
        ['101 characters', { displayName: 'n'.repeat(101) }, ['/displayName']],
        ['no displayName', {}, ['/displayName']],
        ['a tab inside', { displayName: 'Alice\tLiddell' }, ['/displayName']],
        ['a newline inside', { displayName: 'Alice\nLiddell' }, ['/displayName']],
        ['a trailing U+001F', { displayName: 'Alice\u001f' }, ['/displayName']],
        ['U+007F (DEL)', { displayName: 'Al\u007fice' }, ['/displayName']],
        ['U+0001', { displayName: '\u0001Alice' }, ['/displayName']],
      ];
      for (const [name, payload, paths] of cases) {
        const res = await patchMe(app, token, payload);
        const body = expectError(t, res, 400, 'validation_failed');
        t.same(
          [...new Set(body.error.details?.map((detail) => detail.path))],
          paths,
          `${name}: details name ${paths.join(', ')}`,
        );
      }
      t.equal((await app.users.findById('patch-alice'))?.displayName, 'Alice L.', 'unchanged');
    });

    t.test('a displayName containing a NUL character is 400 validation_failed at /displayName, not 500', async (t) => {
      const res = await patchMe(app, token, { displayName: 'Alice\u0000Evil' });
      const body = expectError(t, res, 400, 'validation_failed');
      t.same(
        body.error.details?.map((detail) => detail.path),
        ['/displayName'],
      );
      t.same(
        body.error.details?.map((detail) => detail.message),
        ['must not contain NUL characters'],
      );
      t.notOk(res.body.includes('Evil'), 'the value is not echoed');
      t.equal((await app.users.findById('patch-alice'))?.displayName, 'Alice L.', 'unchanged');
    });

    t.test('a NUL character in a nested or extra body field is 400, not 500', async (t) => {
      // [name, body, the pointer of the NUL, the unknown field (if any)]
      const cases: Array<[string, unknown, string, string?]> = [
        ['an extra string field', { displayName: 'Valid Name', extra: 'x\u0000' }, '/extra', '/extra'],
        [
          'a nested object',
          { displayName: 'Valid Name', extra: { deeper: { value: 'x\u0000' } } },
          '/extra/deeper/value',
          '/extra',
        ],
        ['an array item', { displayName: 'Valid Name', extra: ['ok', '\u0000'] }, '/extra/1', '/extra'],
        ['a lone NUL as the display name', { displayName: '\u0000' }, '/displayName'],
      ];
      for (const [name, payload, nulPath, unknownPath] of cases) {
        const body = expectError(t, await patchMe(app, token, payload), 400, 'validation_failed');
        const details = body.error.details ?? [];
        t.ok(details.length > 0, `${name}: details given`);
        // Either check may answer first: the NUL check (at the NUL) or validation (at the unknown field).
        t.ok(
          details.every(
            (detail) =>
              (detail.message === 'must not contain NUL characters' && detail.path === nulPath) ||
              (unknownPath !== undefined &&
                detail.message === 'is not an accepted field' &&
                detail.path === unknownPath),
          ),
          `${name}: names the NUL at ${nulPath}${unknownPath ? ` or the unknown field ${unknownPath}` : ''} (${JSON.stringify(details)})`,
        );
      }
      t.equal((await app.users.findById('patch-alice'))?.displayName, 'Alice L.', 'unchanged');
    });

    t.test('a NUL character in the query string is 400 validation_failed at /querystring/<name>', async (t) => {
      const res = await app.inject({ method: 'GET', url: '/api/user?x=a%00b', headers: bearer(token) });
      const body = expectError(t, res, 400, 'validation_failed');
      t.same(body.error.details, [{ path: '/querystring/x', message: 'must not contain NUL characters' }]);
    });

    t.test('a JSON array or a string body is 400', async (t) => {
      expectError(t, await patchMe(app, token, ['Alice']), 400, 'validation_failed');
      const res = await app.inject({
        method: 'PATCH',
        url: '/api/user',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: '"Alice"',
      });
      expectError(t, res, 400, 'validation_failed');
    });

    t.test('100 characters is accepted', async (t) => {
      const res = await patchMe(app, token, { displayName: 'm'.repeat(100) });
      t.equal(res.statusCode, 200);
      t.equal(res.json<CurrentUserBody>().data.displayName, 'm'.repeat(100));
    });

    t.test('a first PATCH from a new subject provisions it and sets the name', async (t) => {
      const res = await patchMe(app, tokenFor('patch-new', { name: 'From Token' }), { displayName: 'Chosen' });
      t.equal(res.statusCode, 200);
      t.equal(res.json<CurrentUserBody>().data.displayName, 'Chosen');
      t.equal((await app.users.findById('patch-new'))?.displayName, 'Chosen');
    });

    t.test('an admin by claim sees isAdmin true in the PATCH answer', async (t) => {
      const res = await patchMe(app, tokenFor('patch-alice', { role: 'admin' }), { displayName: 'Alice Admin' });
      t.equal(res.statusCode, 200);
      t.equal(res.json<CurrentUserBody>().data.isAdmin, true);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Other admin configurations
// ---------------------------------------------------------------------------------------------

t.test('ADMIN_USER_IDS=alice,bob', async (t) => {
  const app = await buildTestApp(t, { ADMIN_USER_IDS: ' alice , bob,' });
  t.equal(await isAdminFor(app, 'alice'), true, 'alice');
  t.equal(await isAdminFor(app, 'bob'), true, 'bob');
  t.equal(await isAdminFor(app, 'carol'), false, 'carol');
  t.equal(await isAdminFor(app, 'Alice'), false, 'ids are case-sensitive');
  t.equal(await isAdminFor(app, 'alice,bob'), false, 'the raw list is not an id');
  t.equal(await isAdminFor(app, 'ali'), false, 'a prefix is not an id');
  t.equal((await getAdminUser(app, 'carol', tokenFor('alice'))).statusCode, 200, 'alice can use the admin route');
  expectError(t, await getAdminUser(app, 'alice', tokenFor('carol')), 403, 'forbidden');
  t.equal(await isAdminFor(app, 'carol', { role: 'admin' }), true, 'the default admin claim still applies');
});

t.test('AUTH_ADMIN_CLAIM=roles=admin (array claim)', async (t) => {
  const app = await buildTestApp(t, { AUTH_ADMIN_CLAIM: 'roles=admin' });
  t.equal(await isAdminFor(app, 'arr-1', { roles: ['user', 'admin'] }), true);
  t.equal(await isAdminFor(app, 'arr-2', { roles: 'admin' }), true, 'a scalar claim');
  t.equal(await isAdminFor(app, 'arr-3', { roles: ['user'] }), false);
  t.equal(await isAdminFor(app, 'arr-4', { roles: [] }), false);
  t.equal(await isAdminFor(app, 'arr-5', { roles: ['user,admin'] }), false, 'no splitting of items');
  t.equal(await isAdminFor(app, 'arr-6', { role: 'admin' }), false, 'the default claim no longer applies');
  t.equal(await isAdminFor(app, 'arr-7'), false);
});

t.test('AUTH_ADMIN_CLAIM=realm_access.roles=platform-admin (dotted claim)', async (t) => {
  const app = await buildTestApp(t, { AUTH_ADMIN_CLAIM: 'realm_access.roles=platform-admin' });
  t.equal(await isAdminFor(app, 'dot-1', { realm_access: { roles: ['offline_access', 'platform-admin'] } }), true);
  t.equal(await isAdminFor(app, 'dot-2', { realm_access: { roles: ['offline_access'] } }), false);
  t.equal(await isAdminFor(app, 'dot-3', { realm_access: {} }), false, 'nested path missing');
  t.equal(await isAdminFor(app, 'dot-4', { realm_access: null }), false, 'null parent');
  t.equal(await isAdminFor(app, 'dot-5', { realm_access: 'platform-admin' }), false, 'a string parent');
  t.equal(await isAdminFor(app, 'dot-6', { resource_access: { roles: ['platform-admin'] } }), false, 'another parent');
  t.equal(await isAdminFor(app, 'dot-7'), false);
});

// ---------------------------------------------------------------------------------------------
// Pure rules (plugins/app/auth/rules.ts)
// ---------------------------------------------------------------------------------------------

t.test('readClaim', async (t) => {
  t.equal(readClaim({ role: 'admin' }, 'role'), 'admin');
  t.same(readClaim({ roles: ['a', 'b'] }, 'roles'), ['a', 'b']);
  t.equal(readClaim({ a: { b: { c: 3 } } }, 'a.b.c'), 3, 'dotted path');
  t.same(readClaim({ a: { b: { c: 3 } } }, 'a.b'), { c: 3 });
  t.equal(readClaim({ 'a.b': 'flat' }, 'a.b'), 'flat', 'a flat claim with a dot in its name wins');
  t.equal(readClaim({ 'a.b': 'flat', a: { b: 'nested' } }, 'a.b'), 'flat');
  t.equal(readClaim({}, 'role'), undefined, 'missing');
  t.equal(readClaim({ a: {} }, 'a.b.c'), undefined, 'nested path missing');
  t.equal(readClaim({ a: { b: null } }, 'a.b.c'), undefined, 'null in the middle');
  t.equal(readClaim({ a: 'text' }, 'a.length'), undefined, 'no walking into strings');
  t.equal(readClaim({ a: 5 }, 'a.b'), undefined, 'no walking into numbers');
  t.equal(readClaim({ role: null }, 'role'), null, 'an explicit null is returned as null');
  t.equal(readClaim({ a: ['x', 'y'] }, 'a.1'), 'y', 'array index through a dotted path');
});

t.test('Object.prototype members never make an absent claim match', async (t) => {
  // readClaim walks only into objects, so inherited functions stop a dotted path.
  t.equal(readClaim({}, 'constructor.name'), undefined);
  t.equal(readClaim({ a: {} }, 'a.constructor.name'), undefined);
  t.equal(readClaim({}, 'toString.name'), undefined);
  t.equal(claimMatches({}, { name: 'constructor.name', value: 'Object' }), false);
  t.equal(claimMatches({}, { name: 'hasOwnProperty.name', value: 'hasOwnProperty' }), false);
  const policy = { adminUserIds: new Set<string>(), adminClaim: { name: 'constructor.name', value: 'Object' } };
  t.equal(isPlatformAdmin({ id: 'x', role: 'user', claims: {} }, policy), false, 'no admin from an absent claim');
  // Own properties only, at every level.
  t.equal(readClaim({}, '__proto__'), undefined, '__proto__');
  t.equal(readClaim({}, 'constructor'), undefined, 'constructor');
  t.equal(readClaim({}, 'toString'), undefined, 'toString');
  t.equal(readClaim({}, 'hasOwnProperty'), undefined, 'hasOwnProperty');
  t.equal(readClaim({ a: {} }, 'a.toString'), undefined, 'a.toString');
  t.equal(readClaim({ a: {} }, 'a.__proto__'), undefined, 'a.__proto__');
  t.equal(readClaim({ a: { b: {} } }, 'a.b.constructor'), undefined, 'a.b.constructor');
  t.equal(claimMatches({}, { name: '__proto__', value: '[object Object]' }), false, '__proto__ never matches');
  t.equal(claimMatches({}, { name: 'constructor', value: String(Object) }), false, 'constructor never matches');
  t.equal(claimMatches({ a: {} }, { name: 'a.toString', value: String(Object.prototype.toString) }), false);
  const protoPolicy = { adminUserIds: new Set<string>(), adminClaim: { name: '__proto__', value: '[object Object]' } };
  t.equal(isPlatformAdmin({ id: 'x', role: 'user', claims: {} }, protoPolicy), false, 'no admin from __proto__');
  // A claim really carried by the token under such a name is read as usual.
  t.equal(readClaim({ constructor: 'c' }, 'constructor'), 'c');
  t.equal(readClaim({ a: { toString: 't' } }, 'a.toString'), 't');
  // JSON.parse (as for a token payload) makes "__proto__" an own property, not the prototype.
  const parsed = JSON.parse('{"__proto__": "p", "a": {"__proto__": {"b": 1}}}') as Record<string, unknown>;
  t.equal(readClaim(parsed, '__proto__'), 'p', 'an own __proto__ claim');
  t.equal(readClaim(parsed, 'a.__proto__.b'), 1, 'an own nested __proto__ claim');
});

t.test('claimMatches', async (t) => {
  const admin = { name: 'role', value: 'admin' };
  t.equal(claimMatches({ role: 'admin' }, admin), true);
  t.equal(claimMatches({ role: 'user' }, admin), false);
  t.equal(claimMatches({ role: 'Admin' }, admin), false, 'case-sensitive');
  t.equal(claimMatches({}, admin), false, 'missing claim');
  t.equal(claimMatches({ role: null }, admin), false, 'null claim');
  t.equal(claimMatches({ role: null }, { name: 'role', value: 'null' }), false, 'null never matches, even "null"');
  t.equal(claimMatches({ role: undefined }, { name: 'role', value: 'undefined' }), false);
  t.equal(claimMatches({ role: ['user', 'admin'] }, admin), true, 'array containing the value');
  t.equal(claimMatches({ role: ['user'] }, admin), false);
  t.equal(claimMatches({ role: [] }, admin), false);
  t.equal(claimMatches({ role: 'admins' }, admin), false, 'no substring match');
  t.equal(claimMatches({ role: ['administrator'] }, admin), false, 'no substring match in arrays');
  // Numbers and booleans are compared as text: the configured value is always text.
  t.equal(claimMatches({ level: 1 }, { name: 'level', value: '1' }), true, 'numeric 1 matches "1"');
  t.equal(claimMatches({ level: '1' }, { name: 'level', value: '1' }), true, 'string "1" matches "1"');
  t.equal(claimMatches({ level: 1.0 }, { name: 'level', value: '1.0' }), false, '1.0 is the number 1, text "1"');
  t.equal(claimMatches({ level: [1, 2] }, { name: 'level', value: '2' }), true, 'numeric array item');
  t.equal(claimMatches({ admin: true }, { name: 'admin', value: 'true' }), true, 'boolean true matches "true"');
  t.equal(claimMatches({ admin: false }, { name: 'admin', value: 'true' }), false);
  t.equal(
    claimMatches(
      { realm_access: { roles: ['platform-admin'] } },
      { name: 'realm_access.roles', value: 'platform-admin' },
    ),
    true,
  );
  t.equal(
    claimMatches(
      { realm_access: { roles: 'platform-admin' } },
      { name: 'realm_access.roles', value: 'platform-admin' },
    ),
    true,
  );
  t.equal(claimMatches({ realm_access: {} }, { name: 'realm_access.roles', value: 'platform-admin' }), false);
  t.equal(claimMatches({ realm_access: null }, { name: 'realm_access.roles', value: 'platform-admin' }), false);
});

t.test('isPlatformAdmin', async (t) => {
  const none = { adminUserIds: new Set<string>() };
  const ids = { adminUserIds: new Set(['alice', 'bob']) };
  const claim = { adminUserIds: new Set<string>(), adminClaim: { name: 'role', value: 'admin' } };
  t.equal(isPlatformAdmin({ id: 'alice', role: 'user', claims: {} }, ids), true, 'listed id');
  t.equal(isPlatformAdmin({ id: 'carol', role: 'user', claims: {} }, ids), false, 'unlisted id');
  t.equal(isPlatformAdmin({ id: 'carol', role: 'admin', claims: {} }, none), true, 'role admin');
  t.equal(isPlatformAdmin({ id: 'carol', role: 'user', claims: { role: 'admin' } }, claim), true, 'admin claim');
  t.equal(
    isPlatformAdmin({ id: 'carol', role: 'user', claims: { role: 'admin' } }, none),
    false,
    'claim without a policy claim',
  );
  t.equal(isPlatformAdmin({ id: 'carol', role: 'user', claims: { role: 'user' } }, claim), false);
  t.equal(isPlatformAdmin({ id: 'carol', role: 'user', claims: {} }, none), false, 'none of these');
  t.equal(isPlatformAdmin({ id: 'carol', role: 'Admin', claims: {} }, none), false, 'role is case-sensitive');
});

t.test('displayNameFromClaims', async (t) => {
  t.equal(displayNameFromClaims('sub-1', { name: 'Alice', preferred_username: 'alice' }), 'Alice', 'name first');
  t.equal(
    displayNameFromClaims('sub-1', { preferred_username: 'alice', nickname: 'al' }),
    'alice',
    'then preferred_username',
  );
  t.equal(displayNameFromClaims('sub-1', { nickname: 'al', email: 'a@x' }), 'al', 'then nickname');
  t.equal(displayNameFromClaims('sub-1', { email: 'a@x' }), 'a@x', 'then email');
  t.equal(displayNameFromClaims('sub-1', {}), 'sub-1', 'else the sub');
  t.equal(displayNameFromClaims('sub-1', { name: '' }), 'sub-1', 'empty name skipped');
  t.equal(displayNameFromClaims('sub-1', { name: '  \t ' }), 'sub-1', 'blank name skipped');
  t.equal(displayNameFromClaims('sub-1', { name: null, preferred_username: 'p' }), 'p', 'null name skipped');
  t.equal(displayNameFromClaims('sub-1', { name: 7, preferred_username: 'p' }), 'p', 'numeric name skipped');
  t.equal(displayNameFromClaims('sub-1', { name: ['Alice'] }), 'sub-1', 'array name skipped');
  t.equal(displayNameFromClaims('sub-1', { name: { first: 'A' } }), 'sub-1', 'object name skipped');
  t.equal(displayNameFromClaims('sub-1', { name: '  Alice  ' }), 'Alice', 'trimmed');
  t.equal(displayNameFromClaims('sub-1', { name: 'x'.repeat(500) }), 'x'.repeat(100), 'capped at 100 characters');
  t.equal(
    displayNameFromClaims('sub-1', { name: `${'x'.repeat(99)}😀😀` }),
    `${'x'.repeat(99)}😀`,
    'capped at 100 code points',
  );
  t.equal(displayNameFromClaims('sub-1', { given_name: 'G', family_name: 'F' }), 'sub-1', 'other claims are not used');
  t.equal(displayNameFromClaims('sub-1', { name: 'Mallory\u0000' }), 'Mallory', 'a NUL is removed');
  t.equal(
    displayNameFromClaims('sub-1', { name: 'A\u0000l\u001fi\u007fce' }),
    'Alice',
    'every control character is removed',
  );
  t.equal(
    displayNameFromClaims('sub-1', { name: '\u0000', preferred_username: 'p' }),
    'p',
    'a name empty once cleaned falls through',
  );
  t.equal(
    displayNameFromClaims('sub-1', { name: '\t\n', preferred_username: '\u0000 ', nickname: 'n' }),
    'n',
    'to nickname',
  );
  t.equal(displayNameFromClaims('sub-1', { name: '\u0000', nickname: '\u0001', email: 'e@x' }), 'e@x', 'to email');
  t.equal(displayNameFromClaims('sub-1', { name: '\u0000', email: '\u007f' }), 'sub-1', 'to the sub');
});

t.test('cleanDisplayName', async (t) => {
  t.equal(MAX_DISPLAY_NAME_LENGTH, 100);
  t.test('control characters (U+0000-U+001F, U+007F) are removed', async (t) => {
    t.equal(cleanDisplayName('Ali\u0000ce'), 'Alice', 'NUL');
    t.equal(cleanDisplayName('A\u0001B\u001fC\u007fD'), 'ABCD', 'U+0001, U+001F, U+007F');
    t.equal(cleanDisplayName('line\none\ttab\rcr'), 'lineonetabcr', 'newline, tab and carriage return inside');
    let all = '';
    for (let code = 0; code <= 0x1f; code++) all += String.fromCharCode(code);
    t.equal(cleanDisplayName(`${all}x\u007f`), 'x', 'all 33 of them');
    t.equal(cleanDisplayName('\u0000\u0001\u007f'), '', 'nothing left');
    t.equal(cleanDisplayName('caf\u00e9 \u540d\u{1F600}'), 'caf\u00e9 \u540d\u{1F600}', 'printable non-ASCII kept');
    t.equal(cleanDisplayName('\u0080\u009f'), '\u0080\u009f', 'C1 controls are not in the removed range');
  });
  t.test('the result is trimmed', async (t) => {
    t.equal(cleanDisplayName('  Alice  '), 'Alice');
    t.equal(cleanDisplayName('Alice Liddell'), 'Alice Liddell', 'inner spaces kept');
    t.equal(cleanDisplayName(' \u0000 Alice \u0000 '), 'Alice', 'spaces that surround control characters');
    t.equal(cleanDisplayName('\u00a0Alice\u3000'), 'Alice', 'Unicode spaces');
    t.equal(cleanDisplayName('   '), '', 'blank');
    t.equal(cleanDisplayName(''), '', 'empty');
  });
  t.test('cut to 100 code points, never splitting a surrogate pair', async (t) => {
    t.equal(cleanDisplayName('n'.repeat(100)), 'n'.repeat(100), '100 kept');
    t.equal(cleanDisplayName('n'.repeat(101)), 'n'.repeat(100), '101 cut to 100');
    t.equal(cleanDisplayName('n'.repeat(10_000)), 'n'.repeat(100), '10 000 cut to 100');
    const emoji = '\u{1F600}';
    t.equal(emoji.length, 2, 'the emoji is two UTF-16 units');
    t.equal(
      cleanDisplayName(`${'a'.repeat(99)}${emoji}`),
      `${'a'.repeat(99)}${emoji}`,
      'an emoji as the 100th code point is kept whole (101 units)',
    );
    t.equal(cleanDisplayName(`${'a'.repeat(99)}${emoji}z`), `${'a'.repeat(99)}${emoji}`, 'cut after the emoji');
    t.equal(
      cleanDisplayName(`${'a'.repeat(100)}${emoji}`),
      'a'.repeat(100),
      'an emoji as the 101st code point is dropped whole',
    );
    t.equal(cleanDisplayName(emoji.repeat(150)), emoji.repeat(100), '100 emoji (200 units)');
    for (const result of [
      cleanDisplayName(`${'a'.repeat(99)}${emoji}${emoji}`),
      cleanDisplayName(`${'a'.repeat(100)}${emoji}`),
    ]) {
      t.notMatch(result, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/, 'no lone surrogate');
      t.ok(Array.from(result).length <= MAX_DISPLAY_NAME_LENGTH, 'at most 100 code points');
    }
    t.equal(cleanDisplayName(`\u0000${'c'.repeat(100)}\u0000`), 'c'.repeat(100), 'control characters do not count');
    t.equal(cleanDisplayName(`   ${'s'.repeat(100)}`), 's'.repeat(100), 'leading spaces do not count');
    t.equal(cleanDisplayName(`${'s'.repeat(99)} tail`), 's'.repeat(99), 'trimmed again after the cut');
  });
});
