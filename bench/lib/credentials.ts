import { createSigner } from 'fast-jwt';

// The bench's signing secret, the tokens signed with it, and the server settings every bench uses.

export const BENCH_SECRET = 'bench-secret-that-is-long-enough-0123456789';

/** A token for the server under test, valid for an hour. */
export const benchToken = (claims: { sub: string; role?: 'admin' }) =>
  createSigner({ key: BENCH_SECRET, algorithm: 'HS256', expiresIn: 3_600_000 })(claims);
/** Platform admins carry `role: admin`; the limit is out of reach, so every request is counted but none refused. */
export const BENCH_SERVER_ENV = { AUTH_ADMIN_CLAIM: 'role=admin', RATE_LIMIT_MAX: '1000000000' };
