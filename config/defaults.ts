import { isIP } from 'node:net';

/**
 * The development defaults (the dev secret, the `role=admin` claim, CORS from any origin, demo
 * data, a generated session key) and the rule that decides when they apply.
 */

export const DEV_JWT_SECRET = 'pack-service-dev-secret-do-not-use-in-production';

/** 127.0.0.0/8, ::1 and localhost: a server only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

export const DEV_DEFAULTS_RULE =
  'development defaults apply only when NODE_ENV is not production and HOST is a loopback address';
