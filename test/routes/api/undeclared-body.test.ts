import { eq } from 'drizzle-orm';
import t from 'tap';
import { purchases, users } from '../../../db/schema.js';
import { bearer, tokenFor } from '../../support/app.js';
import { buildSessionApp, signInWith, startProviders, whoAmI } from '../../support/sessions.js';
import { packInStatus } from '../../support/catalog.js';

/**
 * A route that declares no body refuses one, as a route with a strict body refuses unknown
 * fields: a body sent where none is read is a client's mistake, and acting on the request as if
 * it had not been sent would hide it. `{}` and no body at all are the same request.
 */

t.test('a body where none is declared: 400 validation_failed, and nothing done', async (t) => {
  const providers = await startProviders(t);
  const app = await buildSessionApp(t, providers);
  const refused = (
    res: { statusCode: number; json: () => { error: { code: string; details?: unknown } } },
    what: string,
  ) => {
    t.equal(res.statusCode, 400, what);
    t.same(
      res.json().error.details,
      [{ path: '/', message: 'must be empty: this endpoint takes no body' }],
      `${what}: says why`,
    );
    t.equal(res.json().error.code, 'validation_failed', what);
  };

  t.test('DELETE /api/user with {"x":1} does not delete the account; with {} or nothing it does', async (t) => {
    const user = await signInWith(app, providers.google, 'g-undeclared-body');
    refused(
      await app.inject({ method: 'DELETE', url: '/api/user', headers: bearer(user.accessToken), payload: { x: 1 } }),
      'a JSON object',
    );
    refused(
      await app.inject({
        method: 'DELETE',
        url: '/api/user',
        headers: { ...bearer(user.accessToken), 'content-type': 'application/json' },
        payload: '[]',
      }),
      'a JSON array',
    );
    refused(
      await app.inject({
        method: 'DELETE',
        url: '/api/user',
        headers: { ...bearer(user.accessToken), 'content-type': 'application/json' },
        payload: 'null',
      }),
      'JSON null',
    );
    const [row] = await app.db.orm.select().from(users).where(eq(users.id, user.userId));
    t.equal(row?.deletedAt, null, 'the account is still there');
    t.equal((await whoAmI(app, user.accessToken)).statusCode, 200, 'and its session works');
    const deleted = await app.inject({
      method: 'DELETE',
      url: '/api/user',
      headers: bearer(user.accessToken),
      payload: {},
    });
    t.equal(deleted.statusCode, 204, '{} is no body: deleted');

    const other = await signInWith(app, providers.google, 'g-no-body');
    t.equal(
      (await app.inject({ method: 'DELETE', url: '/api/user', headers: bearer(other.accessToken) })).statusCode,
      204,
      'no body at all: deleted',
    );
  });

  t.test('a purchase start with a body reserves nothing', async (t) => {
    const { pack } = await packInStatus(app, 'active', {
      pack: { name: 'Bodyless', price: 0, cardsPerPack: 1 },
      pool: [{ quantity: 5 }],
    });
    const fan = tokenFor('fan-undeclared-body');
    refused(
      await app.inject({
        method: 'POST',
        url: `/api/packs/${pack.id}/purchase`,
        headers: bearer(fan),
        payload: { quantity: 3 },
      }),
      'a start with a quantity',
    );
    t.same(await app.db.orm.select().from(purchases).where(eq(purchases.packId, pack.id)), [], 'nothing reserved');
    const started = await app.inject({ method: 'POST', url: `/api/packs/${pack.id}/purchase`, headers: bearer(fan) });
    t.equal(started.statusCode, 201, 'the same start without the body');
  });

  t.test('logout with a body keeps the session', async (t) => {
    const user = await signInWith(app, providers.google, 'g-logout-body');
    refused(
      await app.inject({
        method: 'POST',
        url: '/api/auth/logout',
        headers: bearer(user.accessToken),
        payload: { everywhere: true },
      }),
      'logout with a field',
    );
    t.equal((await whoAmI(app, user.accessToken)).statusCode, 200, 'still signed in');
  });
});
