import { sql } from 'drizzle-orm';
import { boolean, check, index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { MOBILE_PROVIDERS, SESSION_END_REASONS, sqlValues } from '../../schemas/enums.js';
import { ts } from './timestamps.js';
import { users } from './users.js';

// Sign-in: linked provider identities, our sessions and refresh tokens, revoked and used tokens.

/** A provider account (Sign in with Apple, Google) linked to a user. */
export const identities = pgTable(
  'identities',
  {
    provider: text('provider', { enum: MOBILE_PROVIDERS }).notNull(),
    providerSubject: text('provider_subject').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** Profile data only: never used to find or link an account. */
    email: text('email'),
    emailVerified: boolean('email_verified'),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastSignInAt: ts('last_sign_in_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.provider, table.providerSubject] }),
    check('identities_provider_check', sql`${table.provider} in (${sql.raw(sqlValues(MOBILE_PROVIDERS))})`),
    index('identities_user_idx').on(table.userId),
  ],
);

/** A session of our own: its access tokens carry its id (`sid`); its refresh tokens rotate. */
export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    provider: text('provider', { enum: MOBILE_PROVIDERS }),
    userAgent: text('user_agent'),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastUsedAt: ts('last_used_at').notNull().defaultNow(),
    /** Slides forward with every refresh: AUTH_SESSION_TTL without use ends it. */
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    revokedReason: text('revoked_reason', { enum: SESSION_END_REASONS }),
  },
  (table) => [
    check('sessions_revoked_check', sql`(${table.revokedAt} is null) = (${table.revokedReason} is null)`),
    check('sessions_reason_check', sql`${table.revokedReason} in (${sql.raw(sqlValues(SESSION_END_REASONS))})`),
    index('sessions_user_live_idx').on(table.userId).where(sql`${table.revokedAt} is null`),
    // What every instance loads into its revoked set at start.
    index('sessions_revoked_idx').on(table.revokedAt).where(sql`${table.revokedAt} is not null`),
  ],
);

/**
 * The refresh tokens of a session, stored as SHA-256 hashes. A token redeems once: the update that
 * sets `used_at` is conditional. Its successor is kept sealed with a key derived from the token
 * itself, so a retry of the same token can be answered with the same successor, and nobody
 * holding only the database can read it.
 */
export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    createdAt: ts('created_at').notNull().defaultNow(),
    usedAt: ts('used_at'),
    successorHash: text('successor_hash'),
    successorSealed: text('successor_sealed'),
  },
  (table) => [
    check(
      'refresh_tokens_successor_check',
      sql`(${table.usedAt} is null) = (${table.successorHash} is null) and (${table.successorHash} is null) = (${table.successorSealed} is null)`,
    ),
    index('refresh_tokens_session_idx').on(table.sessionId),
  ],
);

/** External-provider tokens logged out before they expire, by `jti` or by hash. */
export const revokedTokens = pgTable(
  'revoked_tokens',
  {
    key: text('key').primaryKey(),
    userId: text('user_id').notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (table) => [index('revoked_tokens_expires_idx').on(table.expiresAt)],
);

/**
 * Provider ID tokens already used to sign in or link, until they expire: each signs in once, so a
 * token and nonce captured in transit cannot open a second session.
 */
export const idTokenUses = pgTable(
  'id_token_uses',
  {
    tokenHash: text('token_hash').primaryKey(),
    expiresAt: ts('expires_at').notNull(),
  },
  (table) => [index('id_token_uses_expires_idx').on(table.expiresAt)],
);

export type IdentityRow = typeof identities.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
