import t from 'tap';
import type { App } from '../../../../app.js';
import { bearer, buildTestApp, tokenFor } from '../../../support/app.js';
import { ADMIN, expectStatus } from '../../../support/catalog.js';

/** Coin bundles and prices: what the admins manage, what fans see, and what never changes. */

type Json = Record<string, unknown>;

const admin = (app: App, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Json, token = ADMIN) =>
  app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
const publicList = async (app: App) => {
  const res = await app.inject({ method: 'GET', url: '/api/products' });
  expectStatus(res, 200, 'public list');
  return res.json().data as { id: string; prices: { id: string; currency: string; unitAmount: number }[] }[];
};

t.test('an admin makes a bundle, prices it, and fans see it on sale', async (t) => {
  const app = await buildTestApp(t);
  const created = await admin(app, 'POST', '/api/admin/products', {
    name: '1,000 coins',
    coins: 1000,
    bonusCoins: 100,
    sortOrder: 2,
  });
  expectStatus(created, 201, 'create');
  const product = created.json().data;
  t.match(product, {
    name: '1,000 coins',
    description: null,
    coins: 1000,
    bonusCoins: 100,
    active: true,
    sortOrder: 2,
    prices: [],
  });
  t.same(await publicList(app), [], 'not on sale without a price');

  const usd = await admin(app, 'POST', `/api/admin/products/${product.id}/prices`, {
    currency: 'usd',
    unitAmount: 999,
  });
  expectStatus(usd, 201, 'price');
  t.match(usd.json().data, { productId: product.id, currency: 'usd', unitAmount: 999, active: true });
  const eur = (
    await admin(app, 'POST', `/api/admin/products/${product.id}/prices`, { currency: 'eur', unitAmount: 899 })
  ).json().data;
  const listed = await publicList(app);
  t.equal(listed.length, 1);
  t.same(listed[0]?.prices.map((price) => price.currency).sort(), ['eur', 'usd'], 'one active price per currency');

  t.test('a new price replaces the active one in its currency; the old one is kept, inactive', async (t) => {
    const cheaper = await admin(app, 'POST', `/api/admin/products/${product.id}/prices`, {
      currency: 'usd',
      unitAmount: 799,
    });
    expectStatus(cheaper, 201, 'replace');
    const prices = (await publicList(app))[0]?.prices ?? [];
    t.same(
      prices.filter((price) => price.currency === 'usd').map((price) => price.unitAmount),
      [799],
    );
    const all = (await admin(app, 'GET', `/api/admin/products/${product.id}`)).json().data.prices as {
      id: string;
      active: boolean;
      unitAmount: number;
    }[];
    t.same(
      all.map((price) => [price.unitAmount, price.active]).sort(),
      [
        [799, true],
        [899, true],
        [999, false],
      ].sort(),
      'prices are never deleted',
    );
    const reactivate = await admin(app, 'PATCH', `/api/admin/prices/${usd.json().data.id}`, { active: true });
    expectStatus(reactivate, 409, 'a second active usd price');
    t.equal(reactivate.json().error.code, 'active_price_exists');
  });

  t.test("a price's amount and currency never change", async (t) => {
    for (const body of [{ unitAmount: 1 }, { currency: 'gbp' }, { active: true, unitAmount: 1 }, {}]) {
      const res = await admin(app, 'PATCH', `/api/admin/prices/${eur.id}`, body);
      t.equal(res.statusCode, 400, JSON.stringify(body));
    }
    const off = await admin(app, 'PATCH', `/api/admin/prices/${eur.id}`, { active: false });
    expectStatus(off, 200, 'deactivate');
    t.same(
      (await publicList(app))[0]?.prices.map((price) => price.currency),
      ['usd'],
      'off sale in eur',
    );
    expectStatus(
      await admin(app, 'PATCH', `/api/admin/prices/${eur.id}`, { active: true }),
      200,
      'on again: no other active eur price',
    );
  });

  t.test('an inactive bundle is not listed; edits keep its prices', async (t) => {
    const off = await admin(app, 'PATCH', `/api/admin/products/${product.id}`, {
      active: false,
      name: '1,000 coins (old)',
    });
    expectStatus(off, 200, 'deactivate');
    t.equal(off.json().data.prices.length, 3, 'usd 999 (replaced), eur 899, usd 799');
    t.same(await publicList(app), []);
    t.equal((await admin(app, 'GET', '/api/admin/products')).json().data.length, 1, 'admins still see it');
    expectStatus(
      await admin(app, 'PATCH', `/api/admin/products/${product.id}`, { active: true }),
      200,
      'on sale again',
    );
  });
});

t.test('the public list is in sortOrder, then id', async (t) => {
  const app = await buildTestApp(t);
  const names: string[] = [];
  for (const [name, sortOrder] of [
    ['big', 3],
    ['small', 1],
    ['medium', 2],
  ] as const) {
    const product = (await admin(app, 'POST', '/api/admin/products', { name, coins: 10, sortOrder })).json().data;
    expectStatus(
      await admin(app, 'POST', `/api/admin/products/${product.id}/prices`, { currency: 'usd', unitAmount: 100 }),
      201,
      'price',
    );
    names.push(name);
  }
  const listed = await app.inject({ method: 'GET', url: '/api/products' });
  t.same(
    listed.json().data.map((product: { name: string }) => product.name),
    ['small', 'medium', 'big'],
  );
});

t.test('what is refused', async (t) => {
  const app = await buildTestApp(t);
  const product = (await admin(app, 'POST', '/api/admin/products', { name: 'Bundle', coins: 10 })).json().data;
  const cases: [string, 'POST' | 'PATCH', string, Json, number, string][] = [
    ['no coins', 'POST', '/api/admin/products', { name: 'x', coins: 0 }, 400, 'validation_failed'],
    ['coins as text', 'POST', '/api/admin/products', { name: 'x', coins: '10' }, 400, 'validation_failed'],
    ['a blank name', 'POST', '/api/admin/products', { name: '   ', coins: 10 }, 400, 'validation_failed'],
    ['an unknown field', 'POST', '/api/admin/products', { name: 'x', coins: 10, price: 5 }, 400, 'validation_failed'],
    [
      'a negative bonus',
      'POST',
      '/api/admin/products',
      { name: 'x', coins: 10, bonusCoins: -1 },
      400,
      'validation_failed',
    ],
    [
      'coins and bonus past one bundle',
      'POST',
      '/api/admin/products',
      { name: 'x', coins: 100_000_000, bonusCoins: 1 },
      400,
      'validation_failed',
    ],
    ['an empty edit', 'PATCH', `/api/admin/products/${product.id}`, {}, 400, 'validation_failed'],
    [
      'an edit past one bundle',
      'PATCH',
      `/api/admin/products/${product.id}`,
      { bonusCoins: 100_000_000 },
      400,
      'validation_failed',
    ],
    [
      'an upper-case currency',
      'POST',
      `/api/admin/products/${product.id}/prices`,
      { currency: 'USD', unitAmount: 100 },
      400,
      'validation_failed',
    ],
    [
      'a currency of four letters',
      'POST',
      `/api/admin/products/${product.id}/prices`,
      { currency: 'usdt', unitAmount: 100 },
      400,
      'validation_failed',
    ],
    [
      'a zero amount',
      'POST',
      `/api/admin/products/${product.id}/prices`,
      { currency: 'usd', unitAmount: 0 },
      400,
      'validation_failed',
    ],
    [
      'a fractional amount',
      'POST',
      `/api/admin/products/${product.id}/prices`,
      { currency: 'usd', unitAmount: 4.99 },
      400,
      'validation_failed',
    ],
    [
      "an amount past Stripe's 8 digits",
      'POST',
      `/api/admin/products/${product.id}/prices`,
      { currency: 'usd', unitAmount: 100_000_000 },
      400,
      'validation_failed',
    ],
    [
      'an unknown product',
      'POST',
      '/api/admin/products/nope/prices',
      { currency: 'usd', unitAmount: 100 },
      404,
      'product_not_found',
    ],
    ['editing an unknown product', 'PATCH', '/api/admin/products/nope', { name: 'x' }, 404, 'product_not_found'],
    ['an unknown price', 'PATCH', '/api/admin/prices/nope', { active: false }, 404, 'price_not_found'],
  ];
  for (const [name, method, url, payload, status, code] of cases) {
    const res = await admin(app, method, url, payload);
    t.equal(res.statusCode, status, name);
    t.equal(res.json().error?.code, code, name);
  }
  const fan = tokenFor('fan-products');
  t.equal(
    (await admin(app, 'POST', '/api/admin/products', { name: 'x', coins: 10 }, fan)).statusCode,
    403,
    'fans cannot make bundles',
  );
  t.equal((await admin(app, 'GET', '/api/admin/products', undefined, fan)).statusCode, 403);
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/admin/products', payload: { name: 'x', coins: 10 } })).statusCode,
    401,
  );
  t.equal(
    (await admin(app, 'GET', '/api/admin/products')).json().data.length,
    1,
    'nothing was written by the refusals',
  );
});

t.test('concurrent new prices in one currency leave exactly one active', async (t) => {
  const app = await buildTestApp(t);
  const product = (await admin(app, 'POST', '/api/admin/products', { name: 'Race', coins: 10 })).json().data;
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, index) =>
      admin(app, 'POST', `/api/admin/products/${product.id}/prices`, { currency: 'usd', unitAmount: 100 + index }),
    ),
  );
  t.same(
    answers.map((res) => res.statusCode),
    Array(10).fill(201),
  );
  const prices = (await admin(app, 'GET', `/api/admin/products/${product.id}`)).json().data.prices as {
    active: boolean;
  }[];
  t.equal(prices.length, 10);
  t.equal(prices.filter((price) => price.active).length, 1);
});
