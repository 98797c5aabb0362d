import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { SessionsConfig } from '../../../config/index.js';
import type { MobileProvider } from '../../../schemas/enums.js';
import type { VerifiedToken } from '../auth/tokens.js';
import { NotFoundError, OAuthError, ServiceUnavailableError, UnauthorizedError, ValidationError } from '../errors.js';
import { IdTokenRejected, type IdTokenVerifier, JwksUnavailableError } from './providers.js';
import type { ProviderProfile, SessionsRepository } from './repository.js';
import type { RevocationEntry, RevocationList } from './revocations.js';
import {
  hashRefreshToken,
  isRefreshTokenShape,
  newRefreshToken,
  openSuccessor,
  revocationKey,
  sealSuccessor,
} from './rules.js';

/** Sign-in, refresh, logout and the revoked set: the rules of sessions of our own. */

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  /** Seconds the access token lives. */
  expiresIn: number;
  sessionId: string;
  userId: string;
}

export interface SessionsDependencies {
  config: SessionsConfig;
  repository: SessionsRepository;
  revocations: RevocationList;
  verifiers: Partial<Record<MobileProvider, IdTokenVerifier>>;
  /** Signs an access token (iss, aud, exp, kid are the signer's). */
  sign(payload: { sub: string; sid: string; jti: string }): string;
  /** Tells the other instances (Redis); with PostgreSQL the repository's NOTIFY already has. */
  broadcast(entries: RevocationEntry[]): Promise<void>;
  log: FastifyBaseLogger;
}

export type IdTokenPurpose = 'sign-in' | 'link';

/** Every refusal of an ID token reads the same; the log says why. */
const idTokenRejected = () => new UnauthorizedError('invalid_token', 'The ID token could not be verified.');
const invalidGrant = () => new OAuthError('invalid_grant', 'The refresh token is invalid, expired or revoked.');

export function createSessionsService(deps: SessionsDependencies) {
  const { config, repository, revocations, log } = deps;
  // Keyed by the verified token, which lives as long as its request.
  const answered = new WeakMap<VerifiedToken, boolean>();

  function accessToken(userId: string, sessionId: string): string {
    return deps.sign({ sub: userId, sid: sessionId, jti: randomUUID() });
  }

  function issued(userId: string, sessionId: string, refreshToken: string): IssuedTokens {
    return {
      accessToken: accessToken(userId, sessionId),
      refreshToken,
      tokenType: 'Bearer',
      expiresIn: Math.floor(config.accessTtlMs / 1000),
      sessionId,
      userId,
    };
  }

  /** This instance refuses at once; the others as soon as the bus reaches them. */
  async function applyRevocations(entries: RevocationEntry[]): Promise<void> {
    for (const entry of entries) revocations.add(entry);
    if (entries.length > 0) await deps.broadcast(entries);
  }

  /**
   * A refused ID token is a 401 when it was meant to sign in, and a 400 `invalid_id_token` when a
   * signed-in user links it (the caller's own token is fine: a 401 would tell the app otherwise).
   */
  const refusal = (purpose: IdTokenPurpose) =>
    purpose === 'sign-in'
      ? idTokenRejected()
      : new ValidationError('The ID token could not be verified.', undefined, 'invalid_id_token');

  async function verifyIdToken(
    provider: MobileProvider,
    idToken: string,
    nonce: string,
    purpose: IdTokenPurpose,
  ): Promise<ProviderProfile> {
    const verifier = deps.verifiers[provider];
    if (!verifier)
      throw new ValidationError(
        `Sign-in with ${provider} is not enabled on this service.`,
        [{ path: '/provider', message: 'not enabled' }],
        'provider_not_enabled',
      );
    try {
      return await verifier(idToken, nonce);
    } catch (error) {
      if (error instanceof JwksUnavailableError) {
        log.error({ err: error.cause ?? error, provider }, 'provider JWKS lookup failed');
        throw new ServiceUnavailableError(
          'auth_unavailable',
          'Sign-in cannot be checked right now; try again shortly.',
          error.retryAfterSeconds,
        );
      }
      if (error instanceof IdTokenRejected) {
        log.debug({ provider, reason: error.message }, 'ID token rejected');
        throw refusal(purpose);
      }
      throw error;
    }
  }

  return {
    verifyIdToken,

    /** Signs in with a provider's ID token: the linked user (created on first sign-in) and a new session. */
    async signIn(input: {
      profile: ProviderProfile;
      userAgent: string | null;
    }): Promise<IssuedTokens & { created: boolean }> {
      const refreshToken = newRefreshToken();
      const result = await repository.signIn(input.profile, input.userAgent, hashRefreshToken(refreshToken));
      if ('refused' in result) {
        log.debug({ provider: input.profile.provider, reason: result.refused }, 'sign-in refused');
        throw idTokenRejected();
      }
      return { ...issued(result.userId, result.sessionId, refreshToken), created: result.created };
    },

    /** RFC 6749 §6 with rotation: a token redeems once; a retry within 30 s gets the same successor. */
    async refresh(presented: string): Promise<IssuedTokens> {
      if (!isRefreshTokenShape(presented)) throw invalidGrant();
      const successor = newRefreshToken();
      const presentedHash = hashRefreshToken(presented);
      const outcome = await repository.redeem(
        presentedHash,
        hashRefreshToken(successor),
        sealSuccessor(presented, successor),
      );
      switch (outcome.kind) {
        case 'rotated':
          return issued(outcome.userId, outcome.sessionId, successor);
        case 'retry': {
          const earlier = openSuccessor(presented, outcome.sealed);
          if (!earlier) throw invalidGrant();
          return issued(outcome.userId, outcome.sessionId, earlier);
        }
        case 'reuse':
          // A token used twice beyond the retry window: one of its holders is not the user.
          log.warn(
            { securityEvent: 'refresh_token_reuse', sessionId: outcome.sessionId, userId: outcome.userId },
            'a used refresh token was presented again: the session is revoked',
          );
          await applyRevocations(outcome.revoked);
          throw invalidGrant();
        case 'invalid':
          throw invalidGrant();
      }
    },

    /** Ends what the presented token stands for: its session (ours) or the token itself (external). */
    async logout(token: VerifiedToken, rawToken: string): Promise<number> {
      if (token.issuer === 'session' && token.sid) {
        const ended = await repository.endSession(token.sub, token.sid, 'logout');
        await applyRevocations(ended);
        return ended.length;
      }
      await this.revokeAccessToken(token, rawToken);
      return 1;
    },

    async logoutAll(token: VerifiedToken, rawToken: string): Promise<number> {
      const ended = await repository.endAllSessions(token.sub, 'logout_all');
      await applyRevocations(ended);
      if (token.issuer === 'external') await this.revokeAccessToken(token, rawToken);
      return ended.length + (token.issuer === 'external' ? 1 : 0);
    },

    /** Refuses one access token (ours or external) until it expires, by its `jti` (or its hash without one). */
    async revokeAccessToken(token: VerifiedToken, rawToken: string): Promise<void> {
      const key = token.jti ? revocationKey.jti(token.claims.iss, token.jti) : revocationKey.tokenHash(rawToken);
      await applyRevocations([await repository.revokeExternalToken(key, token.sub, new Date(token.exp * 1000))]);
    },

    /** RFC 7009 for a refresh token: its session ends. Unknown tokens are not an error. */
    async revokeRefreshToken(presented: string): Promise<void> {
      if (!isRefreshTokenShape(presented)) return;
      const session = await repository.sessionOfRefreshToken(hashRefreshToken(presented));
      if (!session) return;
      await applyRevocations(await repository.endSession(session.userId, session.sessionId, 'revoked'));
    },

    liveSessions: repository.liveSessions,
    identities: repository.identitiesOf,
    /** Links a second provider account to the signed-in user. */
    async link(userId: string, profile: ProviderProfile) {
      const identity = await repository.link(userId, profile);
      if (!identity) {
        log.debug({ provider: profile.provider }, 'link refused: the ID token was used before');
        throw refusal('link');
      }
      return identity;
    },

    /** The live session of a refresh token, for the per-session limit. */
    sessionOfRefreshToken: (presented: string) =>
      isRefreshTokenShape(presented)
        ? repository.sessionOfRefreshToken(hashRefreshToken(presented))
        : Promise.resolve(undefined),

    async endSession(userId: string, sessionId: string): Promise<void> {
      const ended = await repository.endSession(userId, sessionId, 'ended_by_user');
      if (ended.length === 0) throw new NotFoundError('session_not_found', 'You have no live session with this id.');
      await applyRevocations(ended);
    },

    /** Account deletion: every session ends now, on every instance, and so does the token used. */
    async deleteAccount(token: VerifiedToken, rawToken: string): Promise<void> {
      await applyRevocations(await repository.deleteAccount(token.sub));
      if (token.issuer === 'external') await this.revokeAccessToken(token, rawToken);
    },

    /**
     * Whether a verified token was logged out: its session, or itself by `jti` or hash. Asked twice
     * a request (the rate limit's key, then authentication) about one verified token: answered once.
     */
    isRevoked(token: VerifiedToken, rawToken: string): boolean {
      let revoked = answered.get(token);
      if (revoked === undefined) {
        revoked =
          (token.sid !== undefined && revocations.has(revocationKey.session(token.sid))) ||
          (token.jti !== undefined && revocations.has(revocationKey.jti(token.claims.iss, token.jti))) ||
          (revocations.holdsHashes && revocations.has(revocationKey.tokenHash(rawToken)));
        answered.set(token, revoked);
      }
      return revoked;
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
