import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseEnv } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import { envSchema } from 'env-schema';
import fp from 'fastify-plugin';

/**
 * Configuration: environment variables (and `.env` when present), validated once at start.
 * The README lists every variable; `.env.example` has each with its default.
 */

export const DEV_JWT_SECRET = 'pack-service-dev-secret-do-not-use-in-production';
const MIN_PRODUCTION_SECRET_LENGTH = 32;

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
});
export type Env = Static<typeof EnvSchema>;

export type KeySource =
  | { kind: 'secret'; secret: string; algorithms: ['HS256']; isDevSecret: boolean }
  | { kind: 'publicKey'; publicKeyPem: string; algorithms: string[] }
  | { kind: 'jwks'; jwksUrl: URL; algorithms: string[]; lookupIntervalMs: number };

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
  /** The service's own sign-in and sessions; null when off (only external-provider tokens are accepted). */
  sessions: SessionsConfig | null;
  /** Stripe Checkout for coin bundles; null when not configured (checkout answers 503). */
  checkout: CheckoutConfig | null;
}

export interface CheckoutConfig {
  secretKey: string;
  webhookSecret: string;
  /** Where the Stripe API is reached: Stripe itself, or a local stand-in. */
  apiBase?: URL;
  successUrl: string;
  cancelUrl: string;
  /** How long an order (and its Checkout Session) waits for payment: at least 30 minutes, Stripe's minimum. */
  ttlMs: number;
}

export type MobileProvider = 'apple' | 'google';

export interface ProviderConfig {
  provider: MobileProvider;
  /** Accepted `aud` values: the app's client ids. */
  clientIds: string[];
  issuers: string[];
  jwksUrl: URL;
}

export interface SessionsConfig {
  /** `iss` (and `aud`) of the access tokens: the service's public URL. */
  issuer: string;
  /** PEM private key that signs access tokens; unset in development: generated into DATA_DIR. */
  privateKeyPem?: string;
  /** PEM (public or private) of the key used before the last rotation: its tokens stay valid until they expire. */
  previousKeyPem?: string;
  accessTtlMs: number;
  sessionTtlMs: number;
  /** Sign-in providers that are on (those with client ids). */
  providers: Partial<Record<MobileProvider, ProviderConfig>>;
  /** Calls per minute to the sign-in, token and revoke endpoints, per IP address and per subject. */
  rateLimit: { perIp: number; perSubject: number };
}

/** A configuration value that cannot start the service; the message names the variable. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** "30 seconds", "15m", "1 hour" or a bare number of milliseconds; zero only where it means "off". */
export function parseDuration(variable: string, value: string, options: { allowZero?: boolean } = {}): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = DURATION_UNITS[(match?.[2] || 'ms').toLowerCase()];
  if (!match || unit === undefined) {
    throw new ConfigError(
      variable,
      `must be a duration such as "30 seconds", "15 minutes" or "500 ms" (got "${value}")`,
    );
  }
  const milliseconds = Math.round(Number(match[1]) * unit);
  if (milliseconds === 0 && !options.allowZero) throw new ConfigError(variable, 'must be longer than zero');
  return milliseconds;
}

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1000,
  kib: 1024,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/** "1 MiB", "512 KB" or a bare number of bytes. */
export function parseSize(variable: string, value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = SIZE_UNITS[(match?.[2] || 'b').toLowerCase()];
  if (!match || unit === undefined || Number(match[1]) <= 0) {
    throw new ConfigError(variable, `must be a size such as "1 MiB" or "512 KB" (got "${value}")`);
  }
  return Math.round(Number(match[1]) * unit);
}

/** `false`, a hop count, or comma-separated proxy addresses. `true` would trust any client's headers. */
export function parseTrustProxy(value: string): boolean | number | string[] {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'false') return false;
  if (trimmed === 'true') {
    throw new ConfigError(
      'TRUST_PROXY',
      'must not be "true": any client could then choose its own IP address; give a hop count or the proxy addresses',
    );
  }
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const addresses = splitList(trimmed);
  for (const address of addresses) {
    const [ip, prefix, extra] = address.split('/');
    // A /0 range would trust every address, which is TRUST_PROXY=true by another name.
    const validPrefix =
      prefix === undefined ||
      (/^\d{1,3}$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= (isIP(ip ?? '') === 6 ? 128 : 32));
    if (!PROXY_NAMES.has(address) && (extra !== undefined || isIP(ip ?? '') === 0 || !validPrefix)) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be false, a hop count, or comma-separated IP addresses or CIDR ranges (got "${address}")`,
      );
    }
  }
  return addresses;
}

/** Names proxy-addr understands for common private ranges. */
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** PEM text as given, or with literal "\n" escapes, as environment files often carry it. */
function algorithmsForPublicKey(pem: string): { publicKeyPem: string; algorithms: string[] } {
  const text = pem.trim().replace(/\\n/g, '\n');
  let key: ReturnType<typeof createPublicKey>;
  try {
    key = createPublicKey(text);
  } catch {
    throw new ConfigError('AUTH_JWT_PUBLIC_KEY', 'is not a readable PEM public key');
  }
  if (isPrivateKey(text)) {
    throw new ConfigError(
      'AUTH_JWT_PUBLIC_KEY',
      'holds a private key: give the public key only; the private key must not leave the identity provider',
    );
  }
  // Re-export in canonical SPKI form so no stray prefix can make the verifier mistake it for an HMAC secret.
  const publicKeyPem = key.export({ type: 'spki', format: 'pem' }).toString();
  switch (key.asymmetricKeyType) {
    case 'rsa':
      if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
        throw new ConfigError('AUTH_JWT_PUBLIC_KEY', 'is an RSA key shorter than 2048 bits');
      }
      return { publicKeyPem, algorithms: ['RS256'] };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      const algorithm = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[curve ?? ''];
      if (!algorithm) throw new ConfigError('AUTH_JWT_PUBLIC_KEY', `uses the unsupported curve ${curve}`);
      return { publicKeyPem, algorithms: [algorithm] };
    }
    case 'ed25519':
      return { publicKeyPem, algorithms: ['EdDSA'] };
    default:
      throw new ConfigError('AUTH_JWT_PUBLIC_KEY', `is a ${key.asymmetricKeyType} key; use RSA, EC or Ed25519`);
  }
}

function isPrivateKey(text: string): boolean {
  try {
    createPrivateKey(text);
    return true;
  } catch {
    return false;
  }
}

/** 127.0.0.0/8, ::1 and localhost: a server only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

const DEV_DEFAULTS_RULE =
  'development defaults apply only when NODE_ENV is not production and HOST is a loopback address';

function resolveKeySource(env: Env, devDefaults: boolean): KeySource {
  const secret = env.AUTH_JWT_SECRET || undefined;
  const pem = env.AUTH_JWT_PUBLIC_KEY || undefined;
  const jwks = env.AUTH_JWKS_URL || undefined;
  const configured = [secret && 'AUTH_JWT_SECRET', pem && 'AUTH_JWT_PUBLIC_KEY', jwks && 'AUTH_JWKS_URL'].filter(
    Boolean,
  );
  if (configured.length > 1) {
    throw new ConfigError(configured.join(' and '), 'are both set: configure exactly one key source');
  }
  if (pem) return { kind: 'publicKey', ...algorithmsForPublicKey(pem) };
  if (jwks) {
    return {
      kind: 'jwks',
      jwksUrl: new URL(jwks),
      algorithms: ['RS256', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      lookupIntervalMs: parseDuration('AUTH_JWKS_LOOKUP_INTERVAL', env.AUTH_JWKS_LOOKUP_INTERVAL),
    };
  }
  if (secret) {
    if (!devDefaults && (secret.length < MIN_PRODUCTION_SECRET_LENGTH || secret === DEV_JWT_SECRET)) {
      throw new ConfigError(
        'AUTH_JWT_SECRET',
        `must be at least ${MIN_PRODUCTION_SECRET_LENGTH} characters and not the public dev secret (${DEV_DEFAULTS_RULE})`,
      );
    }
    return { kind: 'secret', secret, algorithms: ['HS256'], isDevSecret: secret === DEV_JWT_SECRET };
  }
  if (!devDefaults) {
    throw new ConfigError(
      'AUTH_JWT_SECRET',
      `is required unless AUTH_JWT_PUBLIC_KEY or AUTH_JWKS_URL is set: the public dev secret would let anyone mint an admin token (${DEV_DEFAULTS_RULE})`,
    );
  }
  return { kind: 'secret', secret: DEV_JWT_SECRET, algorithms: ['HS256'], isDevSecret: true };
}

function parseAdminClaim(value: string | undefined): AppConfig['auth']['adminClaim'] {
  if (!value) return undefined;
  const separator = value.indexOf('=');
  return { name: value.slice(0, separator).trim(), value: value.slice(separator + 1).trim() };
}

function readDotenv(): Record<string, string> {
  try {
    return parseEnv(readFileSync('.env', 'utf8')) as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
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
    sessions: resolveSessions(env, devDefaults),
    checkout: resolveCheckout(env),
  };
}

const CHECKOUT_MIN_TTL_MS = 30 * 60_000;

/** On when every Stripe value it needs is set; a partial configuration stops the start, naming what is missing. */
function resolveCheckout(env: Env): CheckoutConfig | null {
  const values = {
    STRIPE_SECRET_KEY: env.STRIPE_SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: env.STRIPE_WEBHOOK_SECRET,
    CHECKOUT_SUCCESS_URL: env.CHECKOUT_SUCCESS_URL,
    CHECKOUT_CANCEL_URL: env.CHECKOUT_CANCEL_URL,
  };
  const missing = Object.entries(values)
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (missing.length === Object.keys(values).length) return null;
  if (missing.length > 0)
    throw new ConfigError(missing.join(' and '), `must be set too: checkout needs ${Object.keys(values).join(', ')}`);
  const ttlMs = parseDuration('CHECKOUT_TTL', env.CHECKOUT_TTL);
  if (ttlMs < CHECKOUT_MIN_TTL_MS || ttlMs > 24 * 3_600_000)
    throw new ConfigError(
      'CHECKOUT_TTL',
      'must be between 30 minutes and 24 hours (what Stripe allows for a Checkout Session)',
    );
  return {
    secretKey: values.STRIPE_SECRET_KEY as string,
    webhookSecret: values.STRIPE_WEBHOOK_SECRET as string,
    apiBase: env.STRIPE_API_BASE ? new URL(env.STRIPE_API_BASE) : undefined,
    successUrl: values.CHECKOUT_SUCCESS_URL as string,
    cancelUrl: values.CHECKOUT_CANCEL_URL as string,
    ttlMs,
  };
}

function provider(
  provider: MobileProvider,
  clientIds: string | undefined,
  jwksUrl: string,
  issuers: string,
): ProviderConfig | undefined {
  const ids = splitList(clientIds);
  if (ids.length === 0) return undefined;
  return { provider, clientIds: ids, issuers: splitList(issuers), jwksUrl: new URL(jwksUrl) };
}

/**
 * Sessions are on in development, and elsewhere when asked for (AUTH_SESSIONS=true) or when a
 * signing key is given. Outside development they need a key and the public URL their tokens name.
 */
function resolveSessions(env: Env, devDefaults: boolean): SessionsConfig | null {
  const privateKeyPem = env.AUTH_SESSION_PRIVATE_KEY || undefined;
  const enabled = env.AUTH_SESSIONS ?? (devDefaults || privateKeyPem !== undefined);
  if (!enabled) return null;
  if (!privateKeyPem && !devDefaults) {
    throw new ConfigError(
      'AUTH_SESSION_PRIVATE_KEY',
      `is required when sessions are on (AUTH_SESSIONS=false turns them off): a generated key is for development only (${DEV_DEFAULTS_RULE})`,
    );
  }
  const issuer = (env.PUBLIC_BASE_URL ?? (devDefaults ? env.DEV_BASE_URL : undefined))?.replace(/\/+$/, '');
  if (!issuer)
    throw new ConfigError(
      'PUBLIC_BASE_URL',
      'is required when sessions are on: it is the issuer (`iss`) of the access tokens',
    );
  if (env.AUTH_JWT_ISSUER && env.AUTH_JWT_ISSUER.replace(/\/+$/, '') === issuer) {
    throw new ConfigError(
      'AUTH_JWT_ISSUER',
      `names the service's own URL (${issuer}), which issues the session tokens: the two issuers must differ`,
    );
  }
  const accessTtlMs = parseDuration('AUTH_ACCESS_TTL', env.AUTH_ACCESS_TTL);
  const sessionTtlMs = parseDuration('AUTH_SESSION_TTL', env.AUTH_SESSION_TTL);
  if (sessionTtlMs < accessTtlMs) throw new ConfigError('AUTH_SESSION_TTL', 'must be at least AUTH_ACCESS_TTL');
  const providers: SessionsConfig['providers'] = {};
  const apple = provider('apple', env.AUTH_APPLE_CLIENT_IDS, env.AUTH_APPLE_JWKS_URL, env.AUTH_APPLE_ISSUER);
  const google = provider('google', env.AUTH_GOOGLE_CLIENT_IDS, env.AUTH_GOOGLE_JWKS_URL, env.AUTH_GOOGLE_ISSUER);
  if (apple) providers.apple = apple;
  if (google) providers.google = google;
  return {
    issuer,
    privateKeyPem: privateKeyPem?.trim().replace(/\\n/g, '\n'),
    previousKeyPem: env.AUTH_SESSION_PREVIOUS_KEY?.trim().replace(/\\n/g, '\n') || undefined,
    accessTtlMs,
    sessionTtlMs,
    providers,
    rateLimit: { perIp: env.AUTH_RATE_LIMIT_IP, perSubject: env.AUTH_RATE_LIMIT_SUBJECT },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    config: AppConfig;
  }
}

/** Decorates the validated configuration so every plugin reads the same values. */
export default fp<{ config: AppConfig }>(
  async (fastify, { config }) => {
    fastify.decorate('config', config);
    if (config.auth.keySource.kind === 'secret' && config.auth.keySource.isDevSecret) {
      fastify.log.warn(
        'AUTH_JWT_SECRET is not set: using the documented dev secret. Anyone can mint tokens; never use it in production.',
      );
    }
  },
  { name: 'env' },
);
