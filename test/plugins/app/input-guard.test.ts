import t from 'tap';
import {
  findInputProblem,
  INPUT_LIMITS,
  textProblem,
  undeclaredBodyProblem,
} from '../../../plugins/app/input-guard.js';

/** The rules every parsed input meets before validation (unit tests; the app tests send them as requests). */

const path = (value: unknown) => findInputProblem(value)?.path;

t.test('NUL characters, wherever they are, with the pointer of the first', async (t) => {
  t.equal(path('a\u0000b'), '/', 'a string: the root');
  t.equal(path('plain'), undefined, 'a string without NUL');
  t.equal(path(''), undefined, 'an empty string');
  t.equal(path({ displayName: 'x\u0000' }), '/displayName', 'an object property');
  t.equal(path({ a: { b: { c: 'x\u0000' } } }), '/a/b/c', 'a nested object');
  t.equal(path({ list: ['ok', 'bad\u0000'] }), '/list/1', 'an array index');
  t.equal(path(['ok', ['fine', '\u0000']]), '/1/1', 'nested arrays');
  t.equal(path({ a: 'x\u0000', b: 'y\u0000' }), '/a', 'the first one');
  t.equal(path({ 'a/b': 'x\u0000' }), '/a~1b', 'JSON-pointer escaping of the key');
  t.equal(path({ 'k\u0000': 'v' }), '/k\u0000', 'a NUL in a field name');
  t.match(findInputProblem({ 'k\u0000': 'v' })?.message, /field name/);
  t.equal(path({ a: 1, b: null, c: true, d: ['x', { e: 'y' }], f: {} }), undefined, 'nothing wrong anywhere');
  t.equal(path(undefined), undefined);
  t.equal(path(null), undefined);
  t.equal(path(42), undefined);
  t.equal(path({ a: '\\u0000' }), undefined, 'an escaped "\\u0000" text is not a NUL');
});

t.test('lone surrogates are refused; pairs and other characters are fine', async (t) => {
  for (const bad of ['\ud800', 'a\ud800b', 'a\ud800é\udc00b', 'a\ud800é\udc00é', '\udc00\ud800', 'x\udfff']) {
    t.match(textProblem(bad), /well-formed Unicode/, JSON.stringify(bad));
  }
  for (const good of ['😀', 'a\ud83d\ude00b', '\ufeffadmin-id', 'é', '日本語', 'تجربة']) {
    t.equal(textProblem(good), undefined, JSON.stringify(good));
  }
  t.equal(path({ name: 'ok', description: 'bad \udc00' }), '/description');
  t.equal(path({ ['\ud800']: 1 }), '/\ud800', 'in a field name');
});

t.test('depth, breadth and size are bounded, iteratively', async (t) => {
  let deep: unknown = 'x';
  for (let i = 0; i < 5000; i++) deep = [deep];
  t.same(
    findInputProblem(deep),
    { path: `/${'0/'.repeat(INPUT_LIMITS.maxDepth - 1)}0`, message: 'is nested too deeply (more than 32 levels)' },
    '5,000 levels: no stack overflow',
  );
  let deepObject: Record<string, unknown> = {};
  for (let i = 0; i < 5000; i++) deepObject = { a: deepObject };
  t.match(findInputProblem(deepObject)?.message, /nested too deeply/);
  let fine: unknown = 'x';
  for (let i = 0; i < INPUT_LIMITS.maxDepth; i++) fine = [fine];
  t.equal(findInputProblem(fine), undefined, `${INPUT_LIMITS.maxDepth} levels are fine`);

  const wide = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, i]));
  t.same(findInputProblem(wide), { path: '/', message: 'has too many fields (60000; at most 100)' });
  t.equal(
    findInputProblem(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]))),
    undefined,
    '100 fields are fine',
  );
  t.match(findInputProblem({ list: Array.from({ length: 20_000 }, () => 1) })?.message, /too many values/);
  t.equal(findInputProblem({ list: Array.from({ length: 5_000 }, () => 'x') }), undefined, '5,000 values are fine');
});

t.test('a route that declares no body: nothing, {} or raw bytes pass; anything else is refused', async (t) => {
  for (const fine of [undefined, {}, Buffer.from('{"raw":true}')])
    t.equal(undeclaredBodyProblem(fine), undefined, String(fine));
  for (const refused of [{ x: 1 }, [], [1], null, 'text', 0, false, { '': undefined }]) {
    t.same(
      undeclaredBodyProblem(refused),
      { path: '/', message: 'must be empty: this endpoint takes no body' },
      JSON.stringify(refused) ?? String(refused),
    );
  }
});
