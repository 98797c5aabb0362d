import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Whether `presented` is the secret, in time independent of where they differ (digests of equal
 * length make the comparison's time independent of the lengths too).
 */
export function secretMatches(presented: string, secret: string): boolean {
  return timingSafeEqual(digest(presented), digest(secret));
}

/** The scheduler's guard: `Authorization: Bearer <CRON_SECRET>`, else 401 (always, when no secret is configured). */
export function requireCronSecret(request: FastifyRequest, secret: string | undefined): void {
  const header = request.headers.authorization;
  const presented = typeof header === 'string' && /^Bearer /i.test(header) ? header.slice(7).trim() : undefined;
  if (secret === undefined || presented === undefined || !secretMatches(presented, secret)) {
    throw new AppError(401, 'invalid_cron_secret', 'The cron endpoints need `Authorization: Bearer <CRON_SECRET>`.', {
      headers: { 'www-authenticate': 'Bearer realm="cron"' },
    });
  }
}
