import { envSchema } from 'env-schema';
import { type AppleConfig, resolveApple } from './apple.js';
import { type CheckoutConfig, resolveCheckout } from './checkout.js';
import { isLoopbackHost } from './defaults.js';
import { readDotenv } from './dotenv.js';
import { type GooglePlayConfig, resolveGooglePlay } from './google-play.js';
import { ConfigError } from './errors.js';
import { type KeySource, resolveKeySource } from './keys.js';
import { type Env, EnvSchema } from './schema.js';
import { resolveSessions, type SessionsConfig } from './sessions.js';
import { parseDuration, parseSize, parseTrustProxy, splitList } from './units.js';
import { resolveWebhooks, type WebhooksConfig } from './webhooks.js';

/**
 * Configuration: environment variables (and `.env` when present), validated once at start into
 * the typed AppConfig every part of the service reads. Plain TypeScript: no Fastify here.
 */

export type { AppleApiConfig, AppleConfig } from './apple.js';
export type { CheckoutConfig } from './checkout.js';
export { DEV_JWT_SECRET, isLoopbackHost } from './defaults.js';
export { ConfigError } from './errors.js';
export type { GooglePlayConfig, GooglePubSubConfig, GoogleServiceAccount } from './google-play.js';
export type { KeySource } from './keys.js';
export { type Env, EnvSchema } from './schema.js';
export type { ProviderConfig, SessionsConfig } from './sessions.js';
export { parseDuration, parseSize, parseTrustProxy } from './units.js';
export type { WebhooksConfig } from './webhooks.js';

export interface AppConfig {
  host: string;
  port: number;
  nodeEnv: Env['NODE_ENV'];
  isProduction: boolean;
  /**
   * Whether the development defaults apply (the dev secret, the `role=admin` claim, CORS from any
   * origin, demo data): only when NODE_ENV is not production and HOST is a loopback address.
   */
  devDefaults: boolean;
  dataDir: string;
  databaseUrl?: string;
  /** How often the database is pinged, and how long a ping may take before it counts as down. */
  databaseWatch: { intervalMs: number; timeoutMs: number };
  /**
   * The longest wait for a pool connection that work is queued for: work that would expect to
   * wait longer is refused at once (503 overloaded). 0 queues everything (up to the connect timeout).
   */
  databaseQueueLimitMs: number;
  publicBaseUrl?: string;
  devBaseUrl: string;
  auth: {
    keySource: KeySource;
    issuer?: string;
    audience?: string;
    adminClaim?: { name: string; value: string };
    adminUserIds: ReadonlySet<string>;
    /** Key ids not yet cached may be looked up 10 at once, then one per this interval: every JWKS (the provider's, Apple's, Google's). */
    jwksLookupIntervalMs: number;
  };
  demoData: boolean;
  redisUrl?: string;
  rateLimit: { max: number; windowMs: number };
  logLevel: string;
  trustProxy: boolean | number | string[];
  requestTimeoutMs: number;
  bodyLimitBytes: number;
  corsOrigins: string[] | '*';
  /** 0 turns the event-loop pressure check off (tests do: a loaded test machine lags by design). */
  maxEventLoopDelayMs: number;
  /** The lag past which the public catalog alone is shed (0: only at maxEventLoopDelayMs). */
  catalogMaxEventLoopDelayMs: number;
  /** Writes in progress at which public catalog reads wait their turn (0: never on this count). */
  catalogYieldWrites: number;
  /** Serve Swagger UI at /docs and the document at /docs/json (GET / redirects there). */
  docsEnabled: boolean;
  /** How long a started purchase holds its pack, and how many purchases a user may start a minute. */
  purchases: { ttlMs: number; startsPerMinute: number };
  /** The bearer secret of the cron endpoints (unset: they refuse every call); run the jobs in-process. */
  cron: { secret?: string; internal: boolean };
  /** Run the event log's consumers (quests) in this instance, one instance at a time consuming each. */
  eventConsumers: boolean;
  /** How long the first page of a live leaderboard is served from memory (0: never). */
  leaderboardCacheMs: number;
  /** How long a dashboard answer (per team, range and time zone) is reused (0: never); it carries its `asOf`. */
  dashboardCacheMs: number;
  /** The service's own sign-in and sessions; null when off (only external-provider tokens are accepted). */
  sessions: SessionsConfig | null;
  /** Stripe Checkout for coin bundles; null when not configured (checkout answers 503). */
  checkout: CheckoutConfig | null;
  /** Google Play purchases; null when not configured (its endpoints answer 503 `store_unavailable`). */
  googlePlay: GooglePlayConfig | null;
  /** App Store purchases; null when APPLE_BUNDLE_ID is unset (they answer 503 `store_unavailable`). */
  apple: AppleConfig | null;
  /** Outbound webhooks: whether they may reach loopback and private addresses (never in production). */
  webhooks: WebhooksConfig;
}

function parseAdminClaim(value: string | undefined): AppConfig['auth']['adminClaim'] {
  if (!value) return undefined;
  const separator = value.indexOf('=');
  return { name: value.slice(0, separator).trim(), value: value.slice(separator + 1).trim() };
}

/**
 * Validates the environment and returns the typed configuration. Throws ConfigError (naming the
 * variable) on the first value that cannot work. `dotenv` reads `.env` only for the real process.
 */
export function loadConfig(source: Record<string, string | undefined> = process.env, dotenv = false): AppConfig {
  let env: Env;
  try {
    // The environment wins over .env. An empty value means unset (`DATABASE_URL=`), not invalid.
    const merged = { ...(dotenv ? readDotenv() : {}), ...source };
    const given = Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined && value !== ''));
    env = envSchema<Env>({ schema: EnvSchema, data: given, env: false });
  } catch (error) {
    // env-schema reports e.g. "env/PORT must be <= 65535": name the variable our way.
    const message = (error as Error).message.replace(/env\//g, '');
    const variable = /^(\w+)/.exec(message)?.[1] ?? 'environment';
    throw new ConfigError(variable, message.slice(variable.length).trim());
  }
  const isProduction = env.NODE_ENV === 'production';
  // The conveniences of a developer's machine (dev secret, admin claim, any CORS origin, demo
  // data) never reach a server others can connect to.
  const devDefaults = !isProduction && isLoopbackHost(env.HOST);
  const corsOrigins = splitList(env.CORS_ORIGINS);
  return {
    host: env.HOST,
    port: env.PORT,
    nodeEnv: env.NODE_ENV,
    isProduction,
    devDefaults,
    dataDir: env.DATA_DIR,
    databaseUrl: env.DATABASE_URL || undefined,
    databaseWatch: {
      intervalMs: parseDuration('DATABASE_WATCH_INTERVAL', env.DATABASE_WATCH_INTERVAL),
      timeoutMs: parseDuration('DATABASE_WATCH_TIMEOUT', env.DATABASE_WATCH_TIMEOUT),
    },
    databaseQueueLimitMs: parseDuration('DATABASE_QUEUE_LIMIT', env.DATABASE_QUEUE_LIMIT, { allowZero: true }),
    publicBaseUrl: env.PUBLIC_BASE_URL,
    devBaseUrl: env.DEV_BASE_URL,
    auth: {
      keySource: resolveKeySource(env, devDefaults),
      issuer: env.AUTH_JWT_ISSUER || undefined,
      audience: env.AUTH_JWT_AUDIENCE || undefined,
      adminClaim: parseAdminClaim(env.AUTH_ADMIN_CLAIM ?? (devDefaults ? 'role=admin' : undefined)),
      adminUserIds: new Set(splitList(env.ADMIN_USER_IDS)),
      jwksLookupIntervalMs: parseDuration('AUTH_JWKS_LOOKUP_INTERVAL', env.AUTH_JWKS_LOOKUP_INTERVAL),
    },
    demoData: env.DEMO_DATA ?? devDefaults,
    redisUrl: env.REDIS_URL || undefined,
    rateLimit: { max: env.RATE_LIMIT_MAX, windowMs: parseDuration('RATE_LIMIT_WINDOW', env.RATE_LIMIT_WINDOW) },
    logLevel: env.LOG_LEVEL,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    requestTimeoutMs: parseDuration('REQUEST_TIMEOUT', env.REQUEST_TIMEOUT),
    bodyLimitBytes: parseSize('BODY_LIMIT', env.BODY_LIMIT),
    corsOrigins: corsOrigins.length > 0 ? corsOrigins : devDefaults ? '*' : [],
    maxEventLoopDelayMs: parseDuration('MAX_EVENT_LOOP_DELAY', env.MAX_EVENT_LOOP_DELAY, { allowZero: true }),
    catalogMaxEventLoopDelayMs: parseDuration('CATALOG_MAX_EVENT_LOOP_DELAY', env.CATALOG_MAX_EVENT_LOOP_DELAY, {
      allowZero: true,
    }),
    catalogYieldWrites: env.CATALOG_YIELD_WRITES,
    docsEnabled: env.DOCS_ENABLED,
    purchases: { ttlMs: parseDuration('PURCHASE_TTL', env.PURCHASE_TTL), startsPerMinute: env.PURCHASE_RATE_LIMIT },
    cron: { secret: env.CRON_SECRET || undefined, internal: env.CRON_INTERNAL },
    eventConsumers: env.EVENT_CONSUMERS,
    leaderboardCacheMs: parseDuration('LEADERBOARD_CACHE', env.LEADERBOARD_CACHE, { allowZero: true }),
    dashboardCacheMs: parseDuration('DASHBOARD_CACHE', env.DASHBOARD_CACHE, { allowZero: true }),
    sessions: resolveSessions(env, devDefaults),
    checkout: resolveCheckout(env),
    googlePlay: resolveGooglePlay(env),
    apple: resolveApple(env, devDefaults),
    webhooks: resolveWebhooks(env, isProduction),
  };
}
