import type { IdentityRow, SessionRow } from '../../../db/schema.js';

/** Rows of the sessions service as the Auth group answers them. */

export const toSession = (row: SessionRow, currentSid: string | undefined) => ({
  id: row.id,
  provider: row.provider,
  userAgent: row.userAgent,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt.toISOString(),
  expiresAt: row.expiresAt.toISOString(),
  current: row.id === currentSid,
});

export const toIdentity = (row: IdentityRow) => ({
  provider: row.provider,
  email: row.email,
  emailVerified: row.emailVerified,
  createdAt: row.createdAt.toISOString(),
  lastSignInAt: row.lastSignInAt.toISOString(),
});
