import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Id, Int, Nullable, StrictObject, Text, Timestamp } from './common.js';
import { MobileProvider } from './enums.js';

/** Provider ID tokens are a few kilobytes at most; nonces are the app's random strings. */
const IdToken = Type.String({
  minLength: 1,
  maxLength: 8192,
  description: "The provider's ID token (a JWT), as the sign-in SDK returned it",
});
const Nonce = Type.String({
  minLength: 16,
  maxLength: 256,
  description:
    'The raw nonce the app generated for this sign-in (at least 16 characters). Apple: the app gave Apple its SHA-256 (hex); Google: the app gave Google the nonce itself.',
});

export const MobileSignInBody = StrictObject(
  { provider: Type.Ref(MobileProvider), idToken: IdToken, nonce: Nonce },
  {
    $id: 'MobileSignInRequest',
    examples: [{ provider: 'apple', idToken: 'eyJhbGciOiJSUzI1NiIsImtpZCI6Ij...', nonce: 'p8Vq3yq5c1R2sWm0xT7eUa' }],
  },
);
export type MobileSignInBody = Static<typeof MobileSignInBody>;

export const LinkIdentityBody = StrictObject(
  { provider: Type.Ref(MobileProvider), idToken: IdToken, nonce: Nonce },
  { $id: 'LinkIdentityRequest' },
);

export const SessionTokens = Type.Object(
  {
    accessToken: Text(4096, { description: 'A short-lived JWT for `Authorization: Bearer`' }),
    refreshToken: Text(512, {
      description:
        'Opaque; exchange it at POST /api/auth/token before the session expires. Store it in the Keychain / Keystore.',
    }),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Int({ minimum: 1, maximum: 86_400 * 365, description: 'Seconds until the access token expires' }),
    sessionId: Id,
    userId: Id,
    created: Type.Boolean({ description: 'true when this sign-in created the user' }),
  },
  { $id: 'SessionTokens', additionalProperties: false },
);

export const SessionTokensResponse = Envelope(Type.Ref(SessionTokens));

/** RFC 6749 §6, sent as JSON or as `application/x-www-form-urlencoded`. */
export const TokenRequestBody = StrictObject(
  {
    grant_type: Type.String({ minLength: 1, maxLength: 64, description: 'Only `refresh_token` is supported' }),
    refresh_token: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    client_id: Type.Optional(
      Type.String({ maxLength: 256, description: 'Accepted and ignored: the apps are public clients' }),
    ),
    scope: Type.Optional(
      Type.String({ maxLength: 256, description: 'Accepted and ignored: a refresh keeps the session as it is' }),
    ),
  },
  { $id: 'TokenRequest', examples: [{ grant_type: 'refresh_token', refresh_token: 'mB1v0...' }] },
);
export type TokenRequestBody = Static<typeof TokenRequestBody>;

/** RFC 6749 §5.1: the one response of this API without the success envelope, as OAuth clients expect. */
export const TokenResponse = Type.Object(
  {
    access_token: Text(4096),
    token_type: Type.Literal('Bearer'),
    expires_in: Int({ minimum: 1, maximum: 86_400 * 365 }),
    refresh_token: Text(512),
  },
  { $id: 'TokenResponse', additionalProperties: false },
);

/** RFC 6749 §5.2. */
export const OAuthErrorBody = Type.Object(
  {
    error: Type.Union(['invalid_request', 'invalid_grant', 'unsupported_grant_type'].map((code) => Type.Literal(code))),
    error_description: Text(500),
  },
  { $id: 'OAuthError', additionalProperties: false, description: 'RFC 6749 §5.2 error' },
);

/** RFC 7009 §2.1. */
export const RevokeRequestBody = StrictObject(
  {
    token: Type.String({ minLength: 1, maxLength: 8192 }),
    token_type_hint: Type.Optional(
      Type.String({ maxLength: 64, description: '`refresh_token` or `access_token`; a wrong hint is ignored' }),
    ),
    client_id: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { $id: 'RevokeRequest' },
);
export type RevokeRequestBody = Static<typeof RevokeRequestBody>;

export const LogoutResult = Type.Object(
  { ended: Int({ minimum: 0, maximum: 1_000_000, description: 'Sessions (or external tokens) ended by this call' }) },
  { $id: 'LogoutResult', additionalProperties: false },
);
export const LogoutResponse = Envelope(Type.Ref(LogoutResult));

export const Session = Type.Object(
  {
    id: Id,
    provider: Nullable(Type.Ref(MobileProvider)),
    userAgent: Nullable(Text(512)),
    createdAt: Timestamp,
    lastUsedAt: Timestamp,
    expiresAt: Timestamp,
    current: Type.Boolean({ description: 'The session of the token making this call' }),
  },
  { $id: 'Session', additionalProperties: false },
);
export const SessionListResponse = Envelope(Type.Array(Type.Ref(Session), { maxItems: 200 }));

export const SessionParams = Type.Object({ id: Id }, { additionalProperties: false });

export const Identity = Type.Object(
  {
    provider: Type.Ref(MobileProvider),
    email: Nullable(Text(320)),
    emailVerified: Nullable(Type.Boolean()),
    createdAt: Timestamp,
    lastSignInAt: Timestamp,
  },
  {
    $id: 'Identity',
    additionalProperties: false,
    description: 'A provider account linked to the user; the provider subject is not shown',
  },
);
export const IdentityResponse = Envelope(Type.Ref(Identity));
export const IdentityListResponse = Envelope(Type.Array(Type.Ref(Identity), { maxItems: 100 }));

export const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          kty: Text(8),
          crv: Text(16),
          x: Text(128),
          y: Type.Optional(Text(128)),
          kid: Text(128),
          alg: Text(16),
          use: Text(8),
        },
        { additionalProperties: false },
      ),
      { maxItems: 2 },
    ),
  },
  {
    $id: 'Jwks',
    additionalProperties: false,
    description: 'RFC 7517 JSON Web Key Set: the current and the previous signing key',
  },
);
