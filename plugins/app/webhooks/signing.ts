import { createHmac, randomBytes } from 'node:crypto';

/**
 * Signatures of outbound webhooks, as the Standard Webhooks specification has them, so receivers
 * verify with any of its libraries: a secret is `whsec_` + base64 of its key; the signature is
 * `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`, one per active secret (during a
 * rotation the old and the new secret both sign, and a receiver holding either accepts).
 */

const SECRET_PREFIX = 'whsec_';
/** The key length of a new secret; the specification accepts 24 to 64 bytes. */
export const SECRET_BYTES = 32;
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const WEBHOOK_USER_AGENT = 'PackTeamService-Webhooks/1.0';

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a secret; throws on a secret that is not `whsec_` + base64 of 24 to 64 bytes. */
export function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : '';
  const key = BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES)
    throw new Error(
      `a signing secret is ${SECRET_PREFIX} followed by base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`,
    );
  return key;
}

// The id goes into a header and into the signed content, where a '.' or white space would make
// the content ambiguous or the header invalid: printable ASCII without those.
const MESSAGE_ID = /^[!-\-/-~]{1,256}$/;

/**
 * The `webhook-signature` header value: `v1,<signature>` for each secret, space separated.
 * `timestampSeconds` is the Unix time of the attempt (receivers refuse one too far from theirs).
 */
export function signPayload(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  if (secrets.length === 0) throw new Error('a webhook needs at least one signing secret');
  if (!MESSAGE_ID.test(id))
    throw new Error('a webhook id is 1 to 256 printable ASCII characters without "." or spaces');
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0)
    throw new Error('a webhook timestamp is whole seconds since the Unix epoch');
  const content = `${id}.${timestampSeconds}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', signingKey(secret)).update(content).digest('base64')}`)
    .join(' ');
}

/** Every header of a delivery attempt but the length: the Standard Webhooks three, the type and who sends it. */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signPayload(secrets, id, timestampSeconds, body),
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
  };
}
