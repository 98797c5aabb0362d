import { createHmac } from 'node:crypto';
import type t from 'tap';

/** Hand-built tokens and the shapes the JWT tests share (test/plugins/app/auth/tokens*.test.ts). */

/** A subtest's `t` (the last overload of t.test takes only the callback). */
export type Test = Parameters<Parameters<typeof t.test>[0]>[0];
export type Claims = Record<string, unknown>;

export interface ErrorBody {
  success: false;
  error: { code: string; message: string; requestId?: string; details?: unknown };
}

export const now = () => Math.floor(Date.now() / 1000);
export const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A hand-built HMAC token: any header, any payload, any key (including ones libraries refuse). Members of undefined are left out, as JSON leaves them. */
export function hmacToken(header: Claims, payload: Claims, key: string | Buffer, hash = 'sha256'): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac(hash, key).update(input).digest('base64url')}`;
}
