import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import t from 'tap';
import {
  newSigningSecret,
  SECRET_BYTES,
  signingKey,
  signPayload,
  WEBHOOK_USER_AGENT,
  webhookHeaders,
} from '../../../../plugins/app/webhooks/signing.js';

// Signatures checked with the Standard Webhooks reference library, as a receiver would check them.

const now = () => Math.floor(Date.now() / 1000);
const BODY = JSON.stringify({ type: 'pack.opened', timestamp: '2026-11-27T03:00:00.000Z', data: { packId: 'p1' } });
const ID = '0f3c3c8e-8e49-4f7c-9a39-5d0b1f5a7c11';

/** What the reference library says of these headers: the parsed body, or the reason it refuses. */
function verify(secret: string, body: string, headers: Record<string, string>): unknown {
  try {
    return new Webhook(secret).verify(body, headers);
  } catch (error) {
    if (error instanceof WebhookVerificationError) return `refused: ${error.message}`;
    throw error;
  }
}

t.test('a new secret is whsec_ and base64 of 32 random bytes', async (t) => {
  const secret = newSigningSecret();
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.equal(Buffer.from(secret.slice('whsec_'.length), 'base64').length, SECRET_BYTES);
  t.equal(signingKey(secret).length, 32);
  const many = new Set(Array.from({ length: 50 }, newSigningSecret));
  t.equal(many.size, 50, 'no two alike');
});

t.test('the reference library verifies what we sign', async (t) => {
  const secret = newSigningSecret();
  const headers = webhookHeaders([secret], ID, now(), BODY);
  t.same(Object.keys(headers).sort(), [
    'content-type',
    'user-agent',
    'webhook-id',
    'webhook-signature',
    'webhook-timestamp',
  ]);
  t.equal(headers['content-type'], 'application/json');
  t.equal(headers['user-agent'], WEBHOOK_USER_AGENT);
  t.equal(headers['webhook-id'], ID);
  t.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
  t.same(verify(secret, BODY, headers), JSON.parse(BODY));
});

t.test('the same signature as the reference library computes', async (t) => {
  const secret = newSigningSecret();
  const timestamp = now();
  t.equal(signPayload([secret], ID, timestamp, BODY), new Webhook(secret).sign(ID, new Date(timestamp * 1000), BODY));
  // Non-ASCII bodies are signed as their UTF-8 bytes, as they are sent.
  const unicode = JSON.stringify({ name: 'Étoile ⚽ 🃏' });
  t.equal(
    signPayload([secret], ID, timestamp, unicode),
    new Webhook(secret).sign(ID, new Date(timestamp * 1000), unicode),
  );
});

t.test('rotation: two active secrets, each verifies alone', async (t) => {
  const [oldSecret, newSecret] = [newSigningSecret(), newSigningSecret()];
  const headers = webhookHeaders([newSecret, oldSecret], ID, now(), BODY);
  const signatures = headers['webhook-signature']?.split(' ') ?? [];
  t.equal(signatures.length, 2, 'one signature per secret, space separated');
  for (const signature of signatures) t.match(signature, /^v1,[A-Za-z0-9+/]{43}=$/);
  t.same(verify(oldSecret, BODY, headers), JSON.parse(BODY), 'a receiver with the old secret accepts');
  t.same(verify(newSecret, BODY, headers), JSON.parse(BODY), 'a receiver with the new secret accepts');
  t.match(verify(newSigningSecret(), BODY, headers), /^refused: /, 'a receiver with another secret refuses');
});

t.test('what a receiver must refuse', async (t) => {
  const secret = newSigningSecret();
  const timestamp = now();
  const headers = webhookHeaders([secret], ID, timestamp, BODY);
  t.match(verify(secret, BODY.replace('p1', 'p2'), headers), /^refused: /, 'a changed body');
  t.match(verify(secret, BODY, { ...headers, 'webhook-id': `${ID}x` }), /^refused: /, 'another id');
  t.match(
    verify(secret, BODY, { ...headers, 'webhook-timestamp': String(timestamp + 1) }),
    /^refused: /,
    'a moved timestamp',
  );
  const stale = webhookHeaders([secret], ID, timestamp - 3600, BODY);
  t.match(verify(secret, BODY, stale), /^refused: /, 'an hour-old attempt (replay)');
  // The key is the decoded secret, not its text: an HMAC keyed with the text does not verify.
  const keyedWithText = createHmac('sha256', secret).update(`${ID}.${timestamp}.${BODY}`).digest('base64');
  t.match(verify(secret, BODY, { ...headers, 'webhook-signature': `v1,${keyedWithText}` }), /^refused: /);
});

t.test('secrets of 24 to 64 bytes are accepted, others refused', async (t) => {
  const secretOf = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString('base64')}`;
  for (const bytes of [24, 32, 64]) {
    const secret = secretOf(bytes);
    t.same(verify(secret, BODY, webhookHeaders([secret], ID, now(), BODY)), JSON.parse(BODY), `${bytes} bytes`);
  }
  for (const bad of [secretOf(23), secretOf(65), 'whsec_', 'secret', secretOf(32).slice(6), 'whsec_not base64!!', ''])
    t.throws(() => signPayload([bad], ID, now(), BODY), /a signing secret is whsec_/, `refused: ${bad.slice(0, 20)}`);
});

t.test('ids, timestamps and secrets that cannot be signed', async (t) => {
  const secret = newSigningSecret();
  t.throws(() => signPayload([], ID, now(), BODY), /at least one signing secret/);
  for (const id of ['', 'a b', 'a.b', 'line\nbreak', 'é', 'x'.repeat(257)])
    t.throws(() => signPayload([secret], id, now(), BODY), /webhook id/, JSON.stringify(id));
  for (const timestamp of [-1, 1.5, Number.NaN, 2 ** 60])
    t.throws(() => signPayload([secret], ID, timestamp, BODY), /timestamp/, String(timestamp));
  t.doesNotThrow(() => signPayload([secret], 'msg_2Lp0Yq~x', now(), BODY));
});
