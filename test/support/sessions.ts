import { randomBytes } from 'node:crypto';
import type { App } from '../../app.js';
import { type StandInProvider, startStandInProvider } from '../../scripts/stand-in-provider.js';
import { buildTestApp } from './app.js';

/** Sessions of our own, through stand-in providers on loopback, configured as production is. */

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface Providers {
  apple: StandInProvider;
  google: StandInProvider;
  env: Record<string, string>;
}

export async function startProviders(t: Teardown): Promise<Providers> {
  const [apple, google] = await Promise.all([startStandInProvider('apple'), startStandInProvider('google')]);
  t.teardown(() => Promise.all([apple.close(), google.close()]));
  return { apple, google, env: { ...apple.env, ...google.env } };
}

export async function buildSessionApp(
  t: Teardown,
  providers: Providers,
  env: Record<string, string> = {},
): Promise<App> {
  return buildTestApp(t, { ...providers.env, ...env });
}

export const newNonce = () => randomBytes(16).toString('base64url');

/** `from`: the caller's address (per-address rate limits count it), when not the default. */
export function mobileSignIn(
  app: App,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  from?: string,
) {
  return app.inject({
    method: 'POST',
    url: '/api/auth/mobile/token',
    payload: body,
    headers,
    ...(from ? { remoteAddress: from } : {}),
  });
}

export interface SignedIn {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
  userId: string;
  created: boolean;
}

/** Signs in as `sub` at the provider; throws unless the service answers 200. */
export async function signInWith(
  app: App,
  provider: StandInProvider,
  sub: string,
  claims: Record<string, unknown> = {},
  from?: string,
): Promise<SignedIn> {
  const nonce = newNonce();
  const res = await mobileSignIn(
    app,
    { provider: provider.kind, idToken: provider.mint(sub, nonce, claims), nonce },
    {},
    from,
  );
  if (res.statusCode !== 200) throw new Error(`sign-in answered ${res.statusCode}: ${res.body}`);
  return res.json().data;
}

export function refresh(app: App, refreshToken: string, form = false) {
  return form
    ? app.inject({
        method: 'POST',
        url: '/api/auth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
      })
    : app.inject({
        method: 'POST',
        url: '/api/auth/token',
        payload: { grant_type: 'refresh_token', refresh_token: refreshToken },
      });
}

export const whoAmI = (app: App, accessToken: string) =>
  app.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${accessToken}` } });
