import { generateKeyPairSync, sign } from 'node:crypto';
import t from 'tap';
import { createAppleVerifier } from '../../../../plugins/app/app-store/verifier.js';
import { createAppleCa, issue, signJws } from '../../../support/apple-ca.js';

/** The verifier: Apple's library with remembered chains, still refusing what it refused before. */

const ca = createAppleCa();
const config = {
  bundleId: 'com.example.packs',
  appAppleId: 1234,
  environment: 'Production' as const,
  rootCertificates: [ca.root.der],
  api: null,
};
const transaction = (fields: object = {}) => ({
  transactionId: '7',
  originalTransactionId: '7',
  bundleId: 'com.example.packs',
  productId: 'sku',
  type: 'Consumable',
  environment: 'Production',
  signedDate: Date.now(),
  purchaseDate: Date.now(),
  quantity: 1,
  ...fields,
});

t.test('a remembered chain still checks every signature and the signing date', async (t) => {
  const verifier = createAppleVerifier(config);
  t.match(await verifier.transaction(signJws(ca, transaction())), { transactionId: '7' });
  t.match(
    await verifier.transaction(signJws(ca, transaction({ transactionId: '8' }))),
    { transactionId: '8' },
    'remembered',
  );
  const [head, , signature] = signJws(ca, transaction()).split('.');
  const swapped = `${head}.${Buffer.from(JSON.stringify(transaction({ quantity: 99 }))).toString('base64url')}.${signature}`;
  await t.rejects(verifier.transaction(swapped), { statusCode: 400, code: 'invalid_signed_data' }, 'the JWS signature');
  await t.rejects(
    verifier.transaction(signJws(ca, transaction({ signedDate: Date.now() + 5 * 365 * 86_400_000 }))),
    { code: 'invalid_signed_data' },
    'signed when the certificates were no longer valid',
  );
  await t.rejects(verifier.transaction(signJws(ca, transaction({ bundleId: 'other' }))), {
    code: 'invalid_signed_data',
  });
});

t.test('a remembered chain is no shortcut for a forged or unusual JWS', async (t) => {
  const verifier = createAppleVerifier(config);
  await verifier.transaction(signJws(ca, transaction()));
  const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  await t.rejects(
    verifier.transaction(signJws({ ...ca, leaf: { ...ca.leaf, key: otherKey } }, transaction())),
    { code: 'invalid_signed_data' },
    "the leaf's certificate with another key's signature",
  );
  const [head, body] = signJws(ca, transaction()).split('.') as [string, string];
  const header = JSON.parse(Buffer.from(head, 'base64url').toString());
  const withHeader = (fields: object, signature: string) =>
    `${Buffer.from(JSON.stringify({ ...header, ...fields })).toString('base64url')}.${body}.${signature}`;
  await t.rejects(verifier.transaction(withHeader({ alg: 'none' }, '')), { code: 'invalid_signed_data' }, 'alg none');
  const es384 = withHeader({ alg: 'ES384' }, '');
  const signed384 = sign('sha384', Buffer.from(es384.slice(0, -1)), { key: ca.leaf.key, dsaEncoding: 'ieee-p1363' });
  await t.rejects(
    verifier.transaction(`${es384}${signed384.toString('base64url')}`),
    { code: 'invalid_signed_data' },
    'ES384 with a P-256 key',
  );
  await t.rejects(
    verifier.transaction(signJws(ca, transaction({ exp: Math.floor(Date.now() / 1000) - 60 }))),
    { code: 'invalid_signed_data' },
    'an expired registered claim is still checked',
  );
  t.match(await verifier.transaction(signJws(ca, transaction({ transactionId: '9' }))), { transactionId: '9' });
});

t.test('a leaf from another intermediate with the same names is verified afresh, and refused', async (t) => {
  const verifier = createAppleVerifier(config);
  await verifier.transaction(signJws(ca, transaction()));
  const rogueIntermediate = issue({
    subject: ca.intermediate.subject,
    ca: true,
    marker: '1.2.840.113635.100.6.2.1',
  });
  const rogueLeaf = issue({
    subject: ca.leaf.subject,
    issuer: rogueIntermediate,
    ca: false,
    marker: '1.2.840.113635.100.6.11.1',
  });
  const rogue = { ...ca, intermediate: rogueIntermediate, leaf: rogueLeaf };
  await t.rejects(verifier.transaction(signJws(rogue, transaction())), { code: 'invalid_signed_data' });
});

t.test('notifications are refused with invalid_signature', async (t) => {
  const verifier = createAppleVerifier(config);
  await t.rejects(verifier.notification(signJws(createAppleCa('Other'), { notificationType: 'TEST' })), {
    statusCode: 400,
    code: 'invalid_signature',
  });
  await t.rejects(verifier.notification('not-a-jws'), { code: 'invalid_signature' });
});
