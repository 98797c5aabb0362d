import { type Static, Type } from '@sinclair/typebox';

/**
 * The environment variables the service reads, with their defaults. The README lists every
 * variable; `.env.example` has each with its default.
 */

const OptionalString = Type.Optional(Type.String());

export const EnvSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_WATCH_INTERVAL: Type.String({ default: '500 ms' }),
  DATABASE_WATCH_TIMEOUT: Type.String({ default: '1 second' }),
  DATABASE_QUEUE_LIMIT: Type.String({ default: '500 ms' }),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  DEV_BASE_URL: Type.String({ default: 'http://localhost:3000', pattern: '^https?://' }),
  AUTH_JWT_SECRET: OptionalString,
  AUTH_JWT_PUBLIC_KEY: OptionalString,
  AUTH_JWKS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  AUTH_JWKS_LOOKUP_INTERVAL: Type.String({ default: '1 second' }),
  AUTH_JWT_ISSUER: OptionalString,
  AUTH_JWT_AUDIENCE: OptionalString,
  AUTH_ADMIN_CLAIM: Type.Optional(Type.String({ pattern: '^[^=]+=.+$' })),
  ADMIN_USER_IDS: OptionalString,
  DEMO_DATA: Type.Optional(Type.Boolean()),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  RATE_LIMIT_MAX: Type.Integer({ default: 300, minimum: 1 }),
  RATE_LIMIT_WINDOW: Type.String({ default: '1 minute' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  TRUST_PROXY: Type.String({ default: 'false' }),
  REQUEST_TIMEOUT: Type.String({ default: '30 seconds' }),
  BODY_LIMIT: Type.String({ default: '1 MiB' }),
  CORS_ORIGINS: OptionalString,
  MAX_EVENT_LOOP_DELAY: Type.String({ default: '1 second' }),
  CATALOG_MAX_EVENT_LOOP_DELAY: Type.String({ default: '10 ms' }),
  CATALOG_YIELD_WRITES: Type.Integer({ default: 10, minimum: 0 }),
  DOCS_ENABLED: Type.Boolean({ default: true }),
  PURCHASE_TTL: Type.String({ default: '15 minutes' }),
  PURCHASE_RATE_LIMIT: Type.Integer({ default: 10, minimum: 1 }),
  CRON_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  CRON_INTERNAL: Type.Boolean({ default: true }),
  EVENT_CONSUMERS: Type.Boolean({ default: true }),
  LEADERBOARD_CACHE: Type.String({ default: '1 second' }),
  AUTH_SESSIONS: Type.Optional(Type.Boolean()),
  AUTH_SESSION_PRIVATE_KEY: OptionalString,
  AUTH_SESSION_PREVIOUS_KEY: OptionalString,
  AUTH_ACCESS_TTL: Type.String({ default: '10 minutes' }),
  AUTH_SESSION_TTL: Type.String({ default: '60 days' }),
  AUTH_APPLE_CLIENT_IDS: OptionalString,
  AUTH_APPLE_JWKS_URL: Type.String({ default: 'https://appleid.apple.com/auth/keys', pattern: '^https?://' }),
  AUTH_APPLE_ISSUER: Type.String({ default: 'https://appleid.apple.com', minLength: 1 }),
  AUTH_GOOGLE_CLIENT_IDS: OptionalString,
  AUTH_GOOGLE_JWKS_URL: Type.String({ default: 'https://www.googleapis.com/oauth2/v3/certs', pattern: '^https?://' }),
  AUTH_GOOGLE_ISSUER: Type.String({ default: 'https://accounts.google.com,accounts.google.com', minLength: 1 }),
  AUTH_RATE_LIMIT_IP: Type.Integer({ default: 60, minimum: 1 }),
  AUTH_RATE_LIMIT_SUBJECT: Type.Integer({ default: 30, minimum: 1 }),
  STRIPE_SECRET_KEY: OptionalString,
  STRIPE_WEBHOOK_SECRET: OptionalString,
  STRIPE_API_BASE: Type.Optional(Type.String({ pattern: '^https?://' })),
  CHECKOUT_SUCCESS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  CHECKOUT_CANCEL_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  CHECKOUT_TTL: Type.String({ default: '30 minutes' }),
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: Type.Boolean({ default: false }),
});
export type Env = Static<typeof EnvSchema>;
