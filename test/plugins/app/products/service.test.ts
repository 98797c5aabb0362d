import t from 'tap';
import { buildTestApp } from '../../../support/app.js';

/** The finders other domains read bundles through (checkout prices its orders with them). */

t.test('findProduct and findPrice answer the public shapes, or undefined', async (t) => {
  const app = await buildTestApp(t);
  const product = await app.products.create({ name: 'Finder bundle', coins: 100, bonusCoins: 10, active: false });
  const { price } = await app.products.addPrice(product.id, { currency: 'usd', unitAmount: 199 });
  const { prices: _, ...summary } = product;
  t.same(await app.products.findProduct(product.id), summary, 'a bundle on sale or not, without its prices');
  t.same(await app.products.findPrice(price.id), price);
  t.equal(await app.products.findProduct('no-such-product'), undefined);
  t.equal(await app.products.findPrice('no-such-price'), undefined);
});
