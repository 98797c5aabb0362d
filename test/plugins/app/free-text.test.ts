import { Type } from '@sinclair/typebox';
import t from 'tap';
import { cleanFreeText, freeTextFields } from '../../../plugins/app/free-text.js';
import { Name, trimmed } from '../../../schemas/common.js';
import { bearer, buildTestApp } from '../../support/app.js';
import { ADMIN, expectStatus } from '../../support/catalog.js';

// One rule for free text: every name (packs, collectibles, teams, products) is stored without the
// white space at either end, whatever route writes it.

t.test('the rule: white space at either end goes, inner white space stays', async (t) => {
  t.equal(cleanFreeText('  Gold  Card \n'), 'Gold  Card');
  t.equal(cleanFreeText('Gold'), 'Gold');
});

t.test('the fields a body marks as free text, inline or through a shared schema', async (t) => {
  const Body = Type.Object({
    name: Name(10, ['x']),
    note: Type.Optional(trimmed(Type.String())),
    count: Type.Number(),
  });
  t.same(freeTextFields(Body), ['name', 'note']);
  t.same(freeTextFields({ $ref: 'Body' }, [{ ...Body, $id: 'Body' }]), ['name', 'note']);
  t.same(freeTextFields(Type.Object({ name: Type.String() })), [], 'an unmarked string is left as sent');
  t.same(freeTextFields(undefined), []);
  t.notOk(
    JSON.stringify(Body).includes('free-text'),
    'the mark is not in the schema the validator and the document see',
  );
});

t.test('every name is stored trimmed, product names included', async (t) => {
  const app = await buildTestApp(t);
  const post = (url: string, payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url, headers: bearer(ADMIN), payload });

  const product = await post('/api/admin/products', { name: '  1,000 coins  ', coins: 1000 });
  expectStatus(product, 201, 'product');
  t.equal(product.json().data.name, '1,000 coins', 'a product name');

  const team = await post('/api/admin/teams', { name: ' Northside  FC ' });
  expectStatus(team, 201, 'team');
  t.equal(team.json().data.name, 'Northside  FC', 'a team name');

  const collectible = await post('/api/admin/collectibles', { name: '\tRookie ' });
  expectStatus(collectible, 201, 'collectible');
  t.equal(collectible.json().data.name, 'Rookie', 'a collectible name');

  const pack = await post('/api/admin/packs', { name: ' Starter ' });
  expectStatus(pack, 201, 'pack');
  t.equal(pack.json().data.name, 'Starter', 'a pack name');

  const renamed = await app.inject({
    method: 'PATCH',
    url: `/api/admin/products/${product.json().data.id}`,
    headers: bearer(ADMIN),
    payload: { name: ' 1,000 coins (bonus) ' },
  });
  expectStatus(renamed, 200, 'rename');
  t.equal(renamed.json().data.name, '1,000 coins (bonus)', 'a product renamed');
});
