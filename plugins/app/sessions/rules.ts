import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MobileProvider } from '../../../schemas/enums.js';

/** Pure rules of sessions: refresh-token format, hashing and sealing, nonces, revocation keys. */

/** A retry of a refresh token within this window gets the successor already issued. */
export const REFRESH_RETRY_GRACE_SECONDS = 30;

/** 32 random bytes, base64url: 43 characters. */
const REFRESH_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

export function isRefreshTokenShape(value: string): boolean {
  return REFRESH_TOKEN_PATTERN.test(value);
}

/** What the database keeps of a refresh token: enough to find it, not to use it. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(`refresh-token:${token}`).digest('base64url');
}

/** The sealing key of a token's successor: derived from the token itself, so only its holder can open it. */
function successorKey(token: string): Buffer {
  return createHmac('sha256', token).update('refresh-token-successor').digest();
}

/** AES-256-GCM: iv (12 bytes) | tag (16 bytes) | ciphertext, base64url. */
export function sealSuccessor(presented: string, successor: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', successorKey(presented), iv);
  const ciphertext = Buffer.concat([cipher.update(successor, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

/** The successor, or undefined when the seal was not made with this token (or was altered). */
export function openSuccessor(presented: string, sealed: string): string | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < 29) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', successorKey(presented), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The nonce check of a provider's ID token. Apple's token carries the SHA-256 (hex) of the raw
 * nonce the app generated; Google's carries the raw nonce itself. The app sends us the raw nonce.
 */
export function nonceMatches(provider: MobileProvider, claimed: unknown, rawNonce: string): boolean {
  if (typeof claimed !== 'string' || claimed === '' || rawNonce === '') return false;
  const expected = provider === 'apple' ? createHash('sha256').update(rawNonce, 'utf8').digest('hex') : rawNonce;
  return sameText(claimed, expected);
}

/** Apple sends `email_verified` as a string ("true"), Google as a boolean. */
export function emailVerifiedClaim(value: unknown): boolean | null {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return null;
}

/**
 * How a logged-out token is known on every instance: our own access tokens by their session, an
 * access token by (a hash of) its issuer and `jti`, or without one by the hash of its signed part.
 */
export const revocationKey = {
  session: (sessionId: string) => `sid:${sessionId}`,
  // JSON keeps the two apart: issuer "a" with jti "b:c" is not issuer "a:b" with jti "c".
  // Hashed, so that an identity provider's long iss or jti cannot outgrow an index row or a NOTIFY.
  jti: (issuer: unknown, jti: string) =>
    `jti:${createHash('sha256')
      .update(JSON.stringify([typeof issuer === 'string' ? issuer : null, jti]))
      .digest('base64url')}`,
  tokenHash: (token: string) => `sha256:${signedPartHash(token)}`,
};

/**
 * The hash of a JWT's signed part (header and payload). Not of the whole text: the last character
 * of a signature has unused bits, so one token has several spellings that all verify.
 */
export function signedPartHash(token: string): string {
  return createHash('sha256')
    .update(token.slice(0, token.lastIndexOf('.')))
    .digest('base64url');
}
