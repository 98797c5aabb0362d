import { randomUUID } from 'node:crypto';
import { and, desc, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import {
  identities,
  type IdentityRow,
  idTokenUses,
  refreshTokens,
  revokedTokens,
  type SessionRow,
  sessions,
  teamAdmins,
  teams,
  users,
} from '../../../db/schema.js';
import type { SESSION_END_REASONS } from '../../../schemas/enums.js';
import type { MobileProvider } from '../../../schemas/enums.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { ConflictError, UnauthorizedError } from '../errors.js';
import { REFRESH_RETRY_GRACE_SECONDS, revocationKey } from './rules.js';
import { encodeEntries, type RevocationEntry } from './revocations.js';

/** SQL of identities, sessions, refresh tokens and revocations. */

/** Whether the account exists and is not deleted, holding its row (shared) so a deletion running now is seen. */
async function activeUserExists(tx: Database, userId: string): Promise<boolean> {
  const [row] = await tx.select({ deletedAt: users.deletedAt }).from(users).where(eq(users.id, userId)).for('share');
  return row !== undefined && row.deletedAt === null;
}

export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

/** The channel on which every instance hears of revocations (when Redis is not configured). */
export const REVOCATION_CHANNEL = 'pack_service_revocations';
/** See `remembered`. */
const REVOCATION_MARGIN_MS = 60_000;
/** NOTIFY payloads are limited to 8000 bytes: revocations are sent in groups. */
const ENTRIES_PER_NOTIFY = 80;

export interface ProviderProfile {
  provider: MobileProvider;
  /** The ID token's hash and expiry: it is used once. */
  tokenHash: string;
  expiresAt: Date;
  subject: string;
  email: string | null;
  emailVerified: boolean | null;
  displayName: string;
}

export type Redemption =
  | { kind: 'rotated'; sessionId: string; userId: string }
  | { kind: 'retry'; sessionId: string; userId: string; sealed: string }
  | { kind: 'reuse'; sessionId: string; userId: string; revoked: RevocationEntry[] }
  | { kind: 'invalid' };

export const DELETED_DISPLAY_NAME = 'Deleted user';

export function createSessionsRepository(
  db: DatabaseHandle,
  ttl: { accessTtlMs: number; sessionTtlMs: number; clockToleranceMs: number },
) {
  const sessionTtl = sql`${`${ttl.sessionTtlMs} milliseconds`}::interval`;
  /**
   * A session's access tokens live at most accessTtl (+ skew) after its end: so long is it
   * remembered as revoked, plus a margin for a token signed while the logout committed and for
   * instance clocks a little ahead of the database's.
   */
  const remembered = ttl.accessTtlMs + ttl.clockToleranceMs + REVOCATION_MARGIN_MS;
  const sessionEntry = (id: string, revokedAt: Date): RevocationEntry => ({
    key: revocationKey.session(id),
    until: revokedAt.getTime() + remembered,
  });

  async function notify(tx: Database, entries: RevocationEntry[]): Promise<void> {
    // Sent by PostgreSQL when (and only if) the transaction commits.
    for (let start = 0; start < entries.length; start += ENTRIES_PER_NOTIFY) {
      await tx.execute(
        sql`select pg_notify(${REVOCATION_CHANNEL}, ${encodeEntries(entries.slice(start, start + ENTRIES_PER_NOTIFY))})`,
      );
    }
  }

  async function revokeWhere(
    tx: Database,
    condition: ReturnType<typeof and>,
    reason: SessionEndReason,
  ): Promise<RevocationEntry[]> {
    const ended = await tx
      .update(sessions)
      .set({ revokedAt: sql`now()`, revokedReason: reason })
      .where(and(isNull(sessions.revokedAt), condition))
      .returning({ id: sessions.id, revokedAt: sessions.revokedAt });
    const entries = ended.map((row) => sessionEntry(row.id, row.revokedAt ?? new Date()));
    await notify(tx, entries);
    return entries;
  }

  /** False when the ID token was used before (a replay). */
  async function useIdToken(tx: Database, profile: ProviderProfile): Promise<boolean> {
    const used = await tx
      .insert(idTokenUses)
      .values({ tokenHash: profile.tokenHash, expiresAt: profile.expiresAt })
      .onConflictDoNothing()
      .returning();
    return used.length === 1;
  }

  async function openSession(
    tx: Database,
    userId: string,
    provider: MobileProvider | null,
    userAgent: string | null,
    refreshHash: string,
  ) {
    const id = randomUUID();
    await tx.insert(sessions).values({ id, userId, provider, userAgent, expiresAt: sql`now() + ${sessionTtl}` });
    await tx.insert(refreshTokens).values({ tokenHash: refreshHash, sessionId: id });
    return id;
  }

  return {
    /**
     * The user of a provider account, created with the account on its first sign-in, and a new
     * session for it. Two first sign-ins of one account at once make one user: the identity's
     * primary key decides, and the loser reads the winner's row.
     */
    signIn(
      profile: ProviderProfile,
      userAgent: string | null,
      refreshHash: string,
    ): Promise<{ userId: string; sessionId: string; created: boolean } | { refused: 'deleted' | 'replayed' }> {
      return db.transaction(async (tx) => {
        if (!(await useIdToken(tx, profile))) return { refused: 'replayed' as const };
        // The user row is held (shared) until the session exists: an account deletion either
        // finishes first (and is seen here) or waits, and then ends this session too.
        const find = () =>
          tx
            .select({ userId: identities.userId, deletedAt: users.deletedAt })
            .from(identities)
            .innerJoin(users, eq(users.id, identities.userId))
            .where(and(eq(identities.provider, profile.provider), eq(identities.providerSubject, profile.subject)))
            .for('share', { of: users });
        let [found] = await find();
        let created = false;
        if (!found) {
          const userId = randomUUID();
          await tx.insert(users).values({ id: userId, displayName: profile.displayName, origin: 'mobile' });
          const inserted = await tx
            .insert(identities)
            .values({
              provider: profile.provider,
              providerSubject: profile.subject,
              userId,
              email: profile.email,
              emailVerified: profile.emailVerified,
            })
            .onConflictDoNothing()
            .returning({ userId: identities.userId });
          if (inserted.length === 1) {
            created = true;
            found = { userId, deletedAt: null };
          } else {
            // Another request linked this account first: drop the user made for nothing.
            await tx.delete(users).where(eq(users.id, userId));
            [found] = await find();
          }
        }
        if (!found) throw new Error('the identity vanished while signing in');
        if (found.deletedAt) return { refused: 'deleted' as const };
        if (!created) {
          await tx
            .update(identities)
            .set({ lastSignInAt: sql`now()`, email: profile.email, emailVerified: profile.emailVerified })
            .where(and(eq(identities.provider, profile.provider), eq(identities.providerSubject, profile.subject)));
        }
        const sessionId = await openSession(tx, found.userId, profile.provider, userAgent, refreshHash);
        return { userId: found.userId, sessionId, created };
      });
    },

    /** Links a provider account to a user; undefined for a replayed ID token; 409 when the account belongs to another user. */
    link(userId: string, profile: ProviderProfile): Promise<IdentityRow | undefined> {
      return db.transaction(async (tx) => {
        if (!(await useIdToken(tx, profile))) return undefined;
        // As in signIn: an account deletion running now is seen, or waits for this link (and then removes it).
        if (!(await activeUserExists(tx, userId)))
          throw new UnauthorizedError('invalid_token', 'The token is not valid.');
        const [inserted] = await tx
          .insert(identities)
          .values({
            provider: profile.provider,
            providerSubject: profile.subject,
            userId,
            email: profile.email,
            emailVerified: profile.emailVerified,
          })
          .onConflictDoNothing()
          .returning();
        if (inserted) return inserted;
        const [existing] = await tx
          .select()
          .from(identities)
          .where(and(eq(identities.provider, profile.provider), eq(identities.providerSubject, profile.subject)));
        if (existing?.userId === userId) return existing;
        throw new ConflictError('identity_in_use', 'This account is already linked to another user.');
      });
    },

    identitiesOf(userId: string): Promise<IdentityRow[]> {
      return db.orm.select().from(identities).where(eq(identities.userId, userId)).orderBy(identities.createdAt);
    },

    /**
     * Redeems a refresh token: one conditional update decides which of any concurrent requests
     * rotates it. The others (and a retry within the grace window) read the sealed successor; a
     * later reuse revokes the session, since one of the two holders is not the user.
     */
    redeem(presentedHash: string, successorHash: string, successorSealed: string): Promise<Redemption> {
      return db
        .transaction(async (tx) => {
          const [rotated] = await tx
            .update(refreshTokens)
            .set({ usedAt: sql`clock_timestamp()`, successorHash, successorSealed })
            .where(and(eq(refreshTokens.tokenHash, presentedHash), isNull(refreshTokens.usedAt)))
            .returning({ sessionId: refreshTokens.sessionId });
          if (rotated) {
            const [live] = await tx
              .update(sessions)
              .set({ lastUsedAt: sql`now()`, expiresAt: sql`now() + ${sessionTtl}` })
              .where(
                and(eq(sessions.id, rotated.sessionId), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)),
              )
              .returning({ userId: sessions.userId });
            if (!live) {
              // The session ended: undo the rotation (the transaction rolls back) and refuse.
              throw new SessionGone();
            }
            await tx.insert(refreshTokens).values({ tokenHash: successorHash, sessionId: rotated.sessionId });
            return { kind: 'rotated' as const, sessionId: rotated.sessionId, userId: live.userId };
          }
          const [used] = await tx
            .select({
              sessionId: refreshTokens.sessionId,
              sealed: refreshTokens.successorSealed,
              withinGrace: sql<boolean>`${refreshTokens.usedAt} > clock_timestamp() - ${`${REFRESH_RETRY_GRACE_SECONDS} seconds`}::interval`,
              // A real client never retries a token once it has used the successor.
              successorUsed: sql<boolean>`exists (select 1 from ${refreshTokens} successor where successor.token_hash = ${refreshTokens.successorHash} and successor.used_at is not null)`,
              userId: sessions.userId,
              live: sql<boolean>`${sessions.revokedAt} is null and ${sessions.expiresAt} > now()`,
            })
            .from(refreshTokens)
            .innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
            .where(eq(refreshTokens.tokenHash, presentedHash));
          if (!used?.live) return { kind: 'invalid' as const };
          if (used.withinGrace && !used.successorUsed && used.sealed)
            return { kind: 'retry' as const, sessionId: used.sessionId, userId: used.userId, sealed: used.sealed };
          const revoked = await revokeWhere(tx, eq(sessions.id, used.sessionId), 'refresh_reuse');
          return { kind: 'reuse' as const, sessionId: used.sessionId, userId: used.userId, revoked };
        })
        .catch((error) => {
          if (error instanceof SessionGone) return { kind: 'invalid' as const };
          throw error;
        });
    },

    /** The session a refresh token belongs to, if it is live (RFC 7009 revocation, the per-session limit). */
    async sessionOfRefreshToken(hash: string): Promise<{ sessionId: string; userId: string } | undefined> {
      const [row] = await db.orm
        .select({ sessionId: sessions.id, userId: sessions.userId })
        .from(refreshTokens)
        .innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
        .where(and(eq(refreshTokens.tokenHash, hash), isNull(sessions.revokedAt)));
      return row;
    },

    /** Ends one session of the user; an unknown, foreign or ended session ends nothing. */
    endSession(userId: string, sessionId: string, reason: SessionEndReason): Promise<RevocationEntry[]> {
      return db.transaction((tx) =>
        revokeWhere(
          tx,
          and(eq(sessions.id, sessionId), eq(sessions.userId, userId), gt(sessions.expiresAt, sql`now()`)),
          reason,
        ),
      );
    },

    endAllSessions(userId: string, reason: SessionEndReason): Promise<RevocationEntry[]> {
      return db.transaction((tx) => revokeWhere(tx, eq(sessions.userId, userId), reason));
    },

    /** The user's live sessions, most recently used first. */
    liveSessions(userId: string): Promise<SessionRow[]> {
      return db.orm
        .select()
        .from(sessions)
        .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)))
        .orderBy(desc(sessions.lastUsedAt), desc(sessions.id))
        .limit(200);
    },

    async isLive(sessionId: string): Promise<boolean> {
      const [row] = await db.orm
        .select({ id: sessions.id })
        .from(sessions)
        .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)));
      return row !== undefined;
    },

    /** An external-provider token refused from now until it expires. */
    revokeExternalToken(key: string, userId: string, expiresAt: Date): Promise<RevocationEntry> {
      return db.transaction(async (tx) => {
        const until = expiresAt.getTime() + ttl.clockToleranceMs;
        await tx
          .insert(revokedTokens)
          .values({ key, userId, expiresAt: new Date(until) })
          .onConflictDoNothing();
        const entry = { key, until };
        await notify(tx, [entry]);
        return entry;
      });
    },

    /** Every revocation a token still valid could meet: what an instance loads at start and after a gap. */
    async activeRevocations(): Promise<RevocationEntry[]> {
      const window = sql`${`${remembered} milliseconds`}::interval`;
      const [ended, external] = await Promise.all([
        db.orm
          .select({ id: sessions.id, revokedAt: sessions.revokedAt })
          .from(sessions)
          .where(sql`${sessions.revokedAt} > now() - ${window}`),
        db.orm
          .select({ key: revokedTokens.key, expiresAt: revokedTokens.expiresAt })
          .from(revokedTokens)
          .where(gt(revokedTokens.expiresAt, sql`now()`)),
      ]);
      return [
        ...ended.map((row) => sessionEntry(row.id, row.revokedAt ?? new Date())),
        ...external.map((row) => ({ key: row.key, until: row.expiresAt.getTime() })),
      ];
    },

    /** Deletes what can no longer matter: expired external revocations, sessions ended or expired long ago. */
    async purge(): Promise<void> {
      await db.orm.delete(revokedTokens).where(sql`${revokedTokens.expiresAt} < now()`);
      await db.orm.delete(idTokenUses).where(sql`${idTokenUses.expiresAt} < now()`);
      await db.orm
        .delete(sessions)
        .where(sql`coalesce(${sessions.revokedAt}, ${sessions.expiresAt}) < now() - interval '30 days'`);
    },

    /**
     * Account deletion: every session ends, provider identities are unlinked, team roles are
     * removed, and the profile is anonymized. Money-like records stay, under the anonymized user.
     * Refused while the user is the last owner of a team (the team would have nobody to run it).
     */
    deleteAccount(userId: string): Promise<RevocationEntry[]> {
      return db.transaction(async (tx) => {
        await tx.execute(sql`select 1 from ${users} where ${users.id} = ${userId} for update`);
        const owned = await tx
          .select({ teamId: teamAdmins.teamId })
          .from(teamAdmins)
          .where(and(eq(teamAdmins.userId, userId), eq(teamAdmins.role, 'owner')));
        if (owned.length > 0) {
          const teamIds = owned.map((row) => row.teamId);
          // Membership changes lock the team row the same way: an owner leaving at this moment waits.
          await tx.execute(
            sql`select 1 from ${teams} where ${teams.id} in ${teamIds} order by ${teams.id} collate "C" for no key update`,
          );
          const owners = await tx
            .select({ teamId: teamAdmins.teamId, count: sql<number>`count(*)::int` })
            .from(teamAdmins)
            .where(and(inArray(teamAdmins.teamId, teamIds), eq(teamAdmins.role, 'owner')))
            .groupBy(teamAdmins.teamId);
          const sole = owners.filter((row) => row.count === 1).map((row) => row.teamId);
          if (sole.length > 0) {
            throw new ConflictError(
              'last_owner',
              'You are the last owner of a team: make someone else an owner first.',
              sole.map((teamId) => ({ path: '/teams', message: teamId })),
            );
          }
        }
        await tx.delete(teamAdmins).where(eq(teamAdmins.userId, userId));
        await tx.delete(identities).where(eq(identities.userId, userId));
        await tx
          .update(users)
          .set({ displayName: DELETED_DISPLAY_NAME, role: 'user', deletedAt: sql`now()` })
          .where(eq(users.id, userId));
        const ended = await revokeWhere(tx, eq(sessions.userId, userId), 'account_deleted');
        await tx.update(sessions).set({ userAgent: null }).where(eq(sessions.userId, userId));
        return ended;
      });
    },
  };
}

class SessionGone extends Error {}

export type SessionsRepository = ReturnType<typeof createSessionsRepository>;
