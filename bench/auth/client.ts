import { randomBytes } from 'node:crypto';
import type { RunningServer } from '../lib.js';
import type { StandInProvider } from '../../scripts/stand-in-provider.js';

// HTTP, from the client's side. Node's fetch keeps connections alive (undici's global agent).

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export async function request(
  url: string,
  init: { method?: string; token?: string; json?: unknown; form?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  } else if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const res = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
}

export function expectStatus(what: string, answer: Answer, status = 200): Answer {
  if (answer.status !== status)
    throw new Error(
      `${what} answered ${answer.status} (expected ${status}): ${JSON.stringify(answer.body).slice(0, 500)}`,
    );
  return answer;
}

export interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
  userId: string;
}

export interface SignInBody {
  provider: 'google';
  idToken: string;
  nonce: string;
}

const newNonce = () => randomBytes(16).toString('base64url');
export const signInBody = (provider: StandInProvider, sub: string): SignInBody => {
  const nonce = newNonce();
  return { provider: 'google', idToken: provider.mint(sub, nonce), nonce };
};

export async function signIn(server: RunningServer, body: SignInBody): Promise<SessionTokens> {
  const answer = expectStatus('sign-in', await request(`${server.url}/api/auth/mobile/token`, { json: body }));
  return answer.body.data as SessionTokens;
}

/** Runs `work(i)` for i in [0, count) with at most `width` at once. */
export async function pooled(count: number, width: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}
